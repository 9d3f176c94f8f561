package chart

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// renderErr is helm template's error text, or "" when it renders.
func renderErr(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, "HELM"), append([]string{"template", "t", chartDir, "--namespace", "cpi2",
		"--kube-version", "1.37.2"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stderr.String() + err.Error()
	}
	return ""
}

// Every image a rendered object runs that is the project's (cpi2/) is one make images builds
// (docker/images.sh --list), of the chart's appVersion.
func TestNoImageWithoutABuildFile(t *testing.T) {
	out, err := exec.Command("../../../docker/images.sh", "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if _, err := os.Stat("../../../" + f[1]); err != nil {
			t.Errorf("%s: no build file %s", f[0], f[1])
		}
		built[f[0]] = true
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	b, _ := os.ReadFile(chartDir + "/Chart.yaml")
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, values := range [][]string{nil, {"-f", chartDir + "/values-opt-in.yaml"}} {
		for _, img := range regexp.MustCompile(`(?m)^\s*(?:-\s*)?image: *"?([^"\s]+)`).FindAllStringSubmatch(renderText(t, values...), -1) {
			if strings.HasPrefix(img[1], "cpi2/") {
				seen++
				if !built[img[1]] {
					t.Errorf("the chart runs %s, which make images does not build", img[1])
				}
				if !strings.HasSuffix(img[1], ":"+chart.AppVersion) {
					t.Errorf("%s: not the chart's appVersion %s", img[1], chart.AppVersion)
				}
			}
		}
	}
	if seen < 5 {
		t.Errorf("only %d cpi2/ images found in the rendered chart", seen)
	}
}

func renderText(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(tool(t, "HELM"), append([]string{"template", "t", chartDir, "--namespace", "cpi2",
		"--kube-version", "1.37.2"}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The FlinkDeployments name the Flink version the job is built for (the Maven parent's
// flink.version): the operator starts the image's Flink with that version's options.
func TestFlinkVersionIsTheJobs(t *testing.T) {
	pom, err := os.ReadFile("../../../pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<flink.version>(\d+)\.(\d+)\.\d+</flink.version>`).FindStringSubmatch(string(pom))
	if m == nil {
		t.Fatal("no flink.version in pom.xml")
	}
	want := "v" + m[1] + "_" + m[2]
	docs := render(t)
	fds := all(docs, "FlinkDeployment")
	if len(fds) != 2 {
		t.Fatalf("%d FlinkDeployments", len(fds))
	}
	for _, fd := range fds {
		if get(fd, "spec", "flinkVersion") != want {
			t.Errorf("%v: flinkVersion %v, the job is built for Flink %s.%s (%s)", get(fd, "metadata", "name"),
				get(fd, "spec", "flinkVersion"), m[1], m[2], want)
		}
		conf, _ := get(fd, "spec", "flinkConfiguration").(obj)
		for k := range conf {
			if strings.HasPrefix(k, "state.") { // Flink 2 dropped state.savepoints.dir and state.checkpoints.dir
				t.Errorf("%v: Flink 1 option %s", get(fd, "metadata", "name"), k)
			}
		}
		if conf["execution.checkpointing.savepoint-dir"] == nil || conf["execution.checkpointing.dir"] == nil {
			t.Errorf("%v: no savepoint or checkpoint folder: %v", get(fd, "metadata", "name"), conf)
		}
	}
	// state on a volume, or S3 with credentials from a Secret
	docs = render(t, "--set", "pipeline.stateVolumeClaim=flink-state", "--set", "pipeline.s3.credentialsSecret=s3-creds")
	fd := find(docs, "FlinkDeployment", "t-detector")
	text, _ := yaml.Marshal(get(fd, "spec", "podTemplate"))
	for _, s := range []string{"claimName: flink-state", "mountPath: /opt/flink/state", "name: s3-creds"} {
		if !strings.Contains(string(text), s) {
			t.Errorf("podTemplate has no %q:\n%s", s, text)
		}
	}
}

// values.schema.json refuses a misspelt key where safety depends on it, and a wrong type.
func TestSchemaRefusesMisspeltSafetyKeys(t *testing.T) {
	for _, set := range []string{"agents.enforcer.dryrun=true", "agents.enforcer.optin=true", "agents.enforcer.namespace={a}",
		"agents.enforcr.dryRun=true", "pipeline.flinkversion=v2_2", "agents.collector.sysadminForPerf=true", "clickhouse.enable=false"} {
		if e := renderErr(t, "--set", set); !strings.Contains(e, "additional properties") {
			t.Errorf("--set %s rendered (or failed otherwise): %q", set, e)
		}
	}
	for _, set := range []string{"agents.enforcer.dryRun=yes", "agents.enforcer.taskCgroupDepth=0", "pipeline.flinkVersion=2.2"} {
		if e := renderErr(t, "--set-string", set); e == "" {
			t.Errorf("--set-string %s rendered", set)
		}
	}
	if e := renderErr(t, "--set", "agents.enforcer.dryRun=true"); e != "" {
		t.Errorf("the right key is refused: %s", e)
	}
}

// The agents go on every node, tainted ones too, and are evicted last.
func TestAgentsOnEveryNode(t *testing.T) {
	ds := find(render(t), "DaemonSet", "t-agents")
	spec := get(ds, "spec", "template", "spec")
	if get(spec, "priorityClassName") != "system-node-critical" {
		t.Errorf("priorityClassName %v", get(spec, "priorityClassName"))
	}
	tol, _ := get(spec, "tolerations").([]any)
	if len(tol) != 1 || get(tol[0], "operator") != "Exists" {
		t.Errorf("tolerations %v", tol)
	}
}

// Every ClickHouse client signs in as clickhouse.user (never the password-less default) with the
// password of one Secret, read from a file or the environment, never an argument; an existing
// ClickHouse replaces the chart's.
func TestClickHouseUserAndPassword(t *testing.T) {
	docs := render(t)
	user := "cpi2"
	if find(docs, "Secret", "t-clickhouse") == nil {
		t.Fatal("no Secret t-clickhouse")
	}
	ch := podContainer(t, docs, "StatefulSet", "t-clickhouse", "clickhouse")
	env, _ := yaml.Marshal(get(ch, "env"))
	for _, s := range []string{"name: CLICKHOUSE_USER\n  value: " + user, "name: CLICKHOUSE_PASSWORD", "name: t-clickhouse"} {
		if !strings.Contains(string(env), s) {
			t.Errorf("clickhouse env has no %q:\n%s", s, env)
		}
	}
	apply := strings.Join(strs(get(podContainer(t, docs, "Job", "t-clickhouse-schema", "apply"), "command")), " ")
	if !strings.Contains(apply, "--user "+user) || !strings.Contains(apply, "--password-file /etc/cpi2/clickhouse/password") {
		t.Errorf("schema job: %s", apply)
	}
	loader := find(docs, "FlinkDeployment", "t-loader")
	args := strings.Join(strs(get(loader, "spec", "job", "args")), " ")
	if !strings.Contains(args, "--clickhouse.user "+user) || !strings.Contains(args, "--clickhouse.password-file /etc/cpi2/clickhouse/password") {
		t.Errorf("loader args: %s", args)
	}
	tmpl, _ := yaml.Marshal(get(loader, "spec", "podTemplate"))
	if !strings.Contains(string(tmpl), "secretName: t-clickhouse") || !strings.Contains(string(tmpl), "mountPath: /etc/cpi2/clickhouse") {
		t.Errorf("the loader's pods do not mount the password:\n%s", tmpl)
	}
	text := renderText(t)
	if strings.Contains(text, "username: default") || strings.Contains(args, "password ") {
		t.Error("a default user or a password in the rendered chart")
	}
	if e := renderErr(t, "--set", "clickhouse.user=default"); !strings.Contains(e, "clickhouse") {
		t.Errorf("clickhouse.user=default rendered: %q", e)
	}
	// an existing ClickHouse: no StatefulSet, the given URL everywhere, its Secret required
	if e := renderErr(t, "--set", "clickhouse.enabled=false"); !strings.Contains(e, "clickhouse.url") {
		t.Errorf("clickhouse.enabled=false without a URL: %q", e)
	}
	if e := renderErr(t, "--set", "clickhouse.enabled=false", "--set", "clickhouse.url=https://ch.example:8443"); !strings.Contains(e, "passwordSecret") {
		t.Errorf("an existing ClickHouse without passwordSecret: %q", e)
	}
	docs = render(t, "--set", "clickhouse.enabled=false", "--set", "clickhouse.url=https://ch.example:8443",
		"--set", "clickhouse.passwordSecret=ch-pw", "--set", "clickhouse.caSecret=ch-ca")
	if len(all(docs, "StatefulSet")) != 0 || find(docs, "Secret", "t-clickhouse") != nil {
		t.Error("the chart's ClickHouse or Secret with an existing ClickHouse")
	}
	apply = strings.Join(strs(get(podContainer(t, docs, "Job", "t-clickhouse-schema", "apply"), "command")), " ")
	args = strings.Join(strs(get(find(docs, "FlinkDeployment", "t-loader"), "spec", "job", "args")), " ")
	for _, s := range []string{"https://ch.example:8443", "/etc/cpi2/clickhouse-ca/ca.crt"} {
		if !strings.Contains(apply, s) || !strings.Contains(args, s) {
			t.Errorf("%q missing: apply %s; loader %s", s, apply, args)
		}
	}
	g, _ := yaml.Marshal(get(podContainer(t, docs, "Deployment", "t-grafana", "grafana"), "env"))
	for _, s := range []string{"value: ch.example", `value: "8443"`, "name: ch-pw"} {
		if !strings.Contains(string(g), s) {
			t.Errorf("grafana env has no %q:\n%s", s, g)
		}
	}
	// dashboards for an existing Grafana's sidecar
	if get(find(docs, "ConfigMap", "t-grafana-dashboards"), "metadata", "labels", "grafana_dashboard") != "1" {
		t.Error("the dashboards' ConfigMap is not labelled for Grafana's sidecar")
	}
}

// podContainer is container NAME of the pod template of object KIND/OBJ.
func podContainer(t *testing.T, docs []obj, kind, o, name string) obj {
	t.Helper()
	for _, c := range get(find(docs, kind, o), "spec", "template", "spec", "containers").([]any) {
		if get(c, "name") == name {
			return c.(obj)
		}
	}
	t.Fatalf("no container %s in %s %s", name, kind, o)
	return nil
}
