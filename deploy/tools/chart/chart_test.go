// Package chart checks what deploy/helm/cpi2 renders, beyond schema validity: the agents'
// privileges, the dry-run and opt-in values, the Kafka users and topics against the
// repository's acls.conf and topics.conf, the schema and dashboards provisioned, and that
// kubeconform with the generated schemas refuses what it should. make -C deploy test runs it
// with HELM, KUBECONFORM and SCHEMAS set.
package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type obj = map[string]any

const chartDir = "../../helm/cpi2"

func tool(t *testing.T, env string) string {
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("$%s is not set (make -C deploy test sets it; make -C deploy tools installs the tools)", env)
	}
	return p
}

// render runs helm template with the value files and --set flags given.
func render(t *testing.T, args ...string) []obj {
	t.Helper()
	cmd := exec.Command(tool(t, "HELM"), append([]string{"template", "t", chartDir, "--namespace", "cpi2",
		"--kube-version", "1.37.2"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	var docs []obj
	for _, part := range strings.Split(string(out), "\n---") {
		var o obj
		if err := yaml.Unmarshal([]byte(part), &o); err != nil {
			t.Fatalf("%v\n%s", err, part)
		}
		if o != nil {
			docs = append(docs, o)
		}
	}
	return docs
}

// get walks a path of map keys and list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(obj)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func find(docs []obj, kind, name string) obj {
	for _, d := range docs {
		if d["kind"] == kind && get(d, "metadata", "name") == name {
			return d
		}
	}
	return nil
}

func all(docs []obj, kind string) []obj {
	var out []obj
	for _, d := range docs {
		if d["kind"] == kind {
			out = append(out, d)
		}
	}
	return out
}

func container(t *testing.T, docs []obj, name string) obj {
	t.Helper()
	ds := find(docs, "DaemonSet", "t-agents")
	for _, c := range get(ds, "spec", "template", "spec", "containers").([]any) {
		if get(c, "name") == name {
			return c.(obj)
		}
	}
	t.Fatalf("no container %s in the agents' DaemonSet", name)
	return nil
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, e := range l {
		out = append(out, e.(string))
	}
	return out
}

func has(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func mount(c obj, name string) obj {
	for _, m := range get(c, "volumeMounts").([]any) {
		if get(m, "name") == name {
			return m.(obj)
		}
	}
	return nil
}

// The agents get the least privileges that work (enforcer/README.md, "Privileges").
func TestAgentPrivileges(t *testing.T) {
	docs := render(t)
	pod := get(find(docs, "DaemonSet", "t-agents"), "spec", "template", "spec").(obj)
	if pod["automountServiceAccountToken"] != false || pod["hostPID"] != nil || pod["hostNetwork"] != nil {
		t.Errorf("pod: token %v, hostPID %v, hostNetwork %v", pod["automountServiceAccountToken"], pod["hostPID"], pod["hostNetwork"])
	}
	enf := container(t, docs, "enforcer")
	sc := enf["securityContext"].(obj)
	if get(sc, "runAsUser") != 0.0 || get(sc, "privileged") != false || get(sc, "allowPrivilegeEscalation") != false ||
		strings.Join(strs(get(sc, "capabilities", "drop")), ",") != "ALL" || get(sc, "capabilities", "add") != nil {
		t.Errorf("enforcer securityContext: %v", sc)
	}
	if m := mount(enf, "cgroup"); m == nil || m["readOnly"] != false {
		t.Errorf("enforcer's cgroup mount: %v", m)
	}
	if has(strs(enf["args"]), "--dry-run") || !has(strs(enf["args"]), "--task-cgroup-depth=3") {
		t.Errorf("enforcer args: %v", enf["args"])
	}
	col := container(t, docs, "collector")
	sc = col["securityContext"].(obj)
	if strings.Join(strs(get(sc, "capabilities", "add")), ",") != "PERFMON" || strings.Join(strs(get(sc, "capabilities", "drop")), ",") != "ALL" ||
		get(sc, "privileged") != false || get(sc, "readOnlyRootFilesystem") != true {
		t.Errorf("collector securityContext: %v", sc)
	}
	if m := mount(col, "cgroup"); m == nil || m["readOnly"] != true {
		t.Errorf("collector's cgroup mount: %v", m)
	}
	if m := mount(col, "labels"); m == nil || m["readOnly"] != true {
		t.Errorf("collector's labels mount: %v", m)
	}
	id := container(t, docs, "identity")
	sc = id["securityContext"].(obj)
	if sc["runAsNonRoot"] != true || strings.Join(strs(get(sc, "capabilities", "drop")), ",") != "ALL" || get(sc, "capabilities", "add") != nil {
		t.Errorf("identity securityContext: %v", sc)
	}
	for _, c := range []obj{enf, col} {
		if mount(c, "api-token") != nil {
			t.Errorf("%s gets the API token", c["name"])
		}
	}
	if mount(id, "api-token") == nil {
		t.Error("identity has no API token")
	}
	// the collector on kernels without CAP_PERFMON
	col = container(t, render(t, "--set", "agents.collector.sysAdminForPerf=true"), "collector")
	if strings.Join(strs(get(col, "securityContext", "capabilities", "add")), ",") != "PERFMON,SYS_ADMIN" {
		t.Errorf("sysAdminForPerf: %v", get(col, "securityContext"))
	}
	// RBAC: reading pods, and getting the two owners' kinds; nothing else
	role := find(docs, "ClusterRole", "t-identity")
	var rules []string
	for _, r := range role["rules"].([]any) {
		rules = append(rules, strings.Join(strs(get(r, "apiGroups")), ",")+"/"+strings.Join(strs(get(r, "resources")), ",")+":"+
			strings.Join(strs(get(r, "verbs")), ","))
	}
	if strings.Join(rules, " ") != "/pods:get,list,watch apps/replicasets:get batch/jobs:get" {
		t.Errorf("ClusterRole rules: %v", rules)
	}
	for _, kind := range []string{"Role", "RoleBinding"} {
		if len(all(docs, kind)) != 0 {
			t.Errorf("a %s besides the identity's ClusterRole", kind)
		}
	}
}

// Dry run: every node measures, no enforcer writes (the flag, and a read-only cgroup mount).
// Opt-in: only the listed namespaces are mapped.
func TestDryRunAndOptIn(t *testing.T) {
	docs := render(t, "-f", chartDir+"/values-dry-run.yaml")
	enf := container(t, docs, "enforcer")
	if !has(strs(enf["args"]), "--dry-run") || mount(enf, "cgroup")["readOnly"] != true {
		t.Errorf("dry run: enforcer args %v, cgroup mount %v", enf["args"], mount(enf, "cgroup"))
	}
	if get(find(docs, "DaemonSet", "t-agents"), "spec", "template", "spec", "nodeSelector") != nil {
		t.Error("dry run: the agents do not run on every node")
	}
	// opt-in: every namespace measured (identity maps them all), the enforcer reads the list of
	// shop's and batch's cgroups that identity writes into the volume they share, read-only
	optIn := render(t, "-f", chartDir+"/values-opt-in.yaml")
	id, enf := container(t, optIn, "identity"), container(t, optIn, "enforcer")
	if a := strs(id["args"]); !has(a, "--enforce-file=/run/cpi2/enforce") || !has(a, "--enforce-namespaces=shop,batch") ||
		strings.Contains(strings.Join(a, " "), "--namespaces") {
		t.Errorf("opt-in: identity args %v", a)
	}
	if m := mount(id, "labels"); m == nil || m["mountPath"] != "/run/cpi2" || m["readOnly"] == true {
		t.Errorf("opt-in: identity's labels mount %v", m)
	}
	if !has(strs(enf["args"]), "--enforce-file=/run/cpi2/enforce") || has(strs(enf["args"]), "--dry-run") {
		t.Errorf("opt-in: enforcer args %v", enf["args"])
	}
	if m := mount(enf, "labels"); m == nil || m["mountPath"] != "/run/cpi2" || m["readOnly"] != true {
		t.Errorf("opt-in: enforcer's labels mount %v", m)
	}
	// opted in with no namespace: the list is written, and names none
	if id := container(t, render(t, "--set", "agents.enforcer.optIn=true"), "identity"); !has(strs(id["args"]), "--enforce-file=/run/cpi2/enforce") ||
		strings.Contains(strings.Join(strs(id["args"]), " "), "--enforce-namespaces") {
		t.Errorf("opt-in, no namespace: identity args %v", id["args"])
	}
	// by default: no list, every namespace may be capped
	docs = render(t)
	for _, c := range []string{"identity", "enforcer"} {
		if a := strings.Join(strs(container(t, docs, c)["args"]), " "); strings.Contains(a, "--enforce") || strings.Contains(a, "--namespaces") {
			t.Errorf("default: %s args %v", c, a)
		}
	}
	if mount(container(t, docs, "enforcer"), "labels") != nil {
		t.Error("default: the enforcer mounts the labels volume")
	}
}

// confRows reads a .conf file of the repository as the chart does.
func confRows(t *testing.T, path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

// The Kafka users have exactly the ACLs of stack/kafka/acls.conf; the topics are those of
// schemas/topics.conf with their settings.
func TestKafkaUsersAndTopics(t *testing.T) {
	docs := render(t)
	want := map[string][]string{}
	for _, f := range confRows(t, "../../../stack/kafka/acls.conf") {
		if strings.Contains(strings.Join(f, " "), "{host}") {
			continue // a node's own principal, not one user of the chart
		}
		pattern := map[string]string{"literal": "literal", "prefixed": "prefix"}[f[2]]
		op := strings.ToUpper(f[4][:1]) + strings.ToLower(f[4][1:])
		want["t-"+f[0]] = append(want["t-"+f[0]], f[1]+" "+f[3]+" "+pattern+" "+op)
	}
	got := map[string][]string{}
	for _, u := range all(docs, "KafkaUser") {
		name := get(u, "metadata", "name").(string)
		auth := get(u, "spec", "authentication", "type")
		if wantAuth := map[bool]string{true: "tls", false: "scram-sha-512"}[name == "t-collector" || name == "t-enforcer"]; auth != wantAuth {
			t.Errorf("%s authenticates with %v, want %s", name, auth, wantAuth)
		}
		for _, a := range get(u, "spec", "authorization", "acls").([]any) {
			got[name] = append(got[name], strings.Join([]string{get(a, "resource", "type").(string), get(a, "resource", "name").(string),
				get(a, "resource", "patternType").(string), strings.Join(strs(get(a, "operations")), ",")}, " "))
		}
	}
	for _, m := range []map[string][]string{want, got} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	if len(want) < 5 || len(got) != len(want) {
		t.Errorf("users: got %d, acls.conf has %d principals", len(got), len(want))
	}
	for u, w := range want {
		if strings.Join(got[u], "; ") != strings.Join(w, "; ") {
			t.Errorf("%s:\n got %v\nwant %v", u, got[u], w)
		}
	}
	topics := confRows(t, "../../../schemas/topics.conf")
	if len(all(docs, "KafkaTopic")) != len(topics) {
		t.Errorf("%d KafkaTopics for %d topics", len(all(docs, "KafkaTopic")), len(topics))
	}
	for _, f := range topics {
		kt := find(docs, "KafkaTopic", strings.ReplaceAll(f[0], ".", "-"))
		cfg, _ := get(kt, "spec", "config").(obj)
		if get(kt, "spec", "topicName") != f[0] || get(kt, "spec", "partitions") != num(f[1]) || cfg["retention.ms"] != num(f[2]) ||
			cfg["retention.bytes"] != num(f[3]) || cfg["cleanup.policy"] != f[4] || cfg["segment.ms"] != num(f[5]) ||
			get(kt, "metadata", "labels", "strimzi.io/cluster") != "cpi2" {
			t.Errorf("topic %s: %v", f[0], kt)
		}
	}
	if d := render(t, "--set", "kafka.topics=false", "--set", "kafka.users=false"); len(all(d, "KafkaTopic"))+len(all(d, "KafkaUser")) != 0 {
		t.Error("kafka.topics=false, kafka.users=false still make topics or users")
	}
}

func num(s string) float64 {
	var v float64
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

// The pipeline upgrades through savepoints; the schema and the dashboards are the
// repository's files, whole.
func TestPipelineAndProvisioning(t *testing.T) {
	docs := render(t)
	classes := map[string]string{"t-detector": "org.cpi2.flink.Cpi2Job", "t-loader": "org.cpi2.loader.LoaderJob"}
	for name, class := range classes {
		fd := find(docs, "FlinkDeployment", name)
		if get(fd, "spec", "job", "upgradeMode") != "savepoint" || get(fd, "spec", "job", "entryClass") != class ||
			!has(strs(get(fd, "spec", "job", "args")), "/etc/cpi2/kafka/client.properties") {
			t.Errorf("%s: %v", name, get(fd, "spec", "job"))
		}
		// a password file's option and path are no password
		var rest []string
		args := strs(get(fd, "spec", "job", "args"))
		for i := 0; i < len(args); i++ {
			if args[i] == "--clickhouse.password-file" && i+1 < len(args) && strings.HasPrefix(args[i+1], "/etc/cpi2/") {
				i++
				continue
			}
			rest = append(rest, args[i])
		}
		if strings.Contains(strings.Join(rest, " "), "password") {
			t.Errorf("%s: a password on the command line", name)
		}
	}
	for cm, glob := range map[string]string{"t-clickhouse-migrations": "../../../clickhouse/migrations/*.sql",
		"t-grafana-dashboards": "../../../grafana/dashboards/*.json"} {
		files, _ := filepath.Glob(glob)
		data, _ := get(find(docs, "ConfigMap", cm), "data").(obj)
		if len(files) == 0 || len(data) != len(files) {
			t.Errorf("%s: %d entries for %d files", cm, len(data), len(files))
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if data[filepath.Base(f)] != strings.TrimRight(string(b), "\n") {
				t.Errorf("%s: %s differs from the repository's", cm, filepath.Base(f))
			}
		}
	}
}

// kubeconform with the generated schemas refuses unknown fields, wrong types and a field of
// an older API version; it is not a schema that takes anything.
func TestSchemasRefuse(t *testing.T) {
	kc, schemas := tool(t, "KUBECONFORM"), tool(t, "SCHEMAS")
	bad := map[string]string{
		"unknown field in a container": `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: x}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: i, securityContext: {capabilitiez: {drop: [ALL]}}}]}`,
		"replicas as a string": `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec: {replicas: "two", selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}`,
		"KafkaUser operation (v1beta2) in v1": `apiVersion: kafka.strimzi.io/v1
kind: KafkaUser
metadata: {name: x}
spec:
  authentication: {type: tls}
  authorization: {type: simple, acls: [{resource: {type: topic, name: t, patternType: literal}, operation: Read}]}`,
		"FlinkDeployment upgradeMode": `apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: x}
spec: {job: {jarURI: "local:///x.jar", upgradeMode: restart}}`,
		"KafkaTopic partitions as text": `apiVersion: kafka.strimzi.io/v1
kind: KafkaTopic
metadata: {name: x}
spec: {partitions: many}`,
	}
	good := `apiVersion: kafka.strimzi.io/v1
kind: KafkaTopic
metadata: {name: x}
spec: {partitions: 3, replicas: 3, config: {cleanup.policy: compact}}`
	run := func(doc string) (string, error) {
		cmd := exec.Command(kc, "-strict", "-summary", "-schema-location", schemas+"/{{ .ResourceKind }}{{ .KindSuffix }}.json", "-")
		cmd.Stdin = strings.NewReader(doc)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(good); err != nil {
		t.Fatalf("a valid KafkaTopic refused: %s", out)
	}
	for what, doc := range bad {
		if out, err := run(doc); err == nil || !regexp.MustCompile(`Invalid: 1`).MatchString(out) {
			t.Errorf("%s: accepted (%v): %s", what, err, out)
		}
	}
}
