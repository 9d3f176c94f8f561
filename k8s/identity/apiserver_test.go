package main

// The program against a real kube-apiserver (built by make -C k8s tools from the Kubernetes Go
// modules) over Debian's etcd, as controller-runtime's envtest runs them: two identity
// processes, one per node, follow pods of a Deployment, a StatefulSet, a bare pod, a Job and a
// CronJob's Job. No controller runs, so the test makes the ReplicaSet and Job objects the
// controllers would, with their owner references; the API server validates every object and
// sets each pod's QoS class.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a server or agent the test started; stopped at cleanup.
type proc struct {
	cmd *exec.Cmd
	log *syncBuffer
}

func spawn(t *testing.T, name string, args ...string) *proc {
	p := &proc{cmd: exec.Command(name, args...), log: &syncBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// apiServer is etcd and kube-apiserver with a static admin token.
type apiServer struct {
	t     *testing.T
	bin   string
	args  []string
	url   string
	token string
	kas   *proc
}

func startAPIServer(t *testing.T) *apiServer {
	kasBin, etcdBin := os.Getenv("CPI2_KUBE_APISERVER"), os.Getenv("CPI2_ETCD")
	if kasBin == "" {
		kasBin, _ = filepath.Abs("../../.stack/bin/kube-apiserver")
	}
	if _, err := os.Stat(kasBin); err != nil {
		t.Skipf("no kube-apiserver at %s (make -C k8s tools builds it from k8s/apiserver/go.mod): %v", kasBin, err)
	}
	if etcdBin == "" {
		etcdBin, _ = exec.LookPath("etcd")
	}
	if _, err := os.Stat(etcdBin); etcdBin == "" || err != nil {
		t.Skipf("no etcd (%q): make -C k8s tools installs Debian's etcd-server", etcdBin)
	}
	dir := t.TempDir()
	client, peer := freePort(t), freePort(t)
	spawn(t, etcdBin, "--data-dir", filepath.Join(dir, "etcd"), "--name", "default",
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", client),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", client),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", peer))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "sa.key")
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	raw := make([]byte, 16)
	rand.Read(raw)
	s := &apiServer{t: t, bin: kasBin, token: hex.EncodeToString(raw)}
	os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(s.token+",admin,admin,system:masters\n"), 0o600)
	port := freePort(t)
	s.url = fmt.Sprintf("https://127.0.0.1:%d", port)
	s.args = []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", client),
		fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", "--cert-dir=" + filepath.Join(dir, "certs"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://cpi2.test", "--service-account-key-file=" + keyFile,
		"--service-account-signing-key-file=" + keyFile, "--service-cluster-ip-range=10.0.0.0/24",
		// no controller manager makes service accounts here
		"--disable-admission-plugins=ServiceAccount",
	}
	s.start()
	return s
}

// start runs kube-apiserver and waits (bounded) until /readyz answers 200.
func (s *apiServer) start() {
	t0 := time.Now()
	s.kas = spawn(s.t, s.bin, s.args...)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for time.Since(t0) < 90*time.Second {
		req, _ := http.NewRequest("GET", s.url+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				s.t.Logf("kube-apiserver ready in %.1f s", time.Since(t0).Seconds())
				return
			}
		}
		if s.kas.cmd.ProcessState != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("kube-apiserver not ready within 90 s:\n%s", tail(s.kas.log.String(), 3000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (s *apiServer) kubeconfig(dir string) string {
	path := filepath.Join(dir, "kubeconfig")
	os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: t, context: {cluster: t, user: admin}}]
current-context: t
`, s.url, s.token)), 0o600)
	return path
}

func identityBinary(t *testing.T) string {
	return goBinary(t, "CPI2_IDENTITY", "cpi2-k8s-identity", ".")
}

// goBinary is the binary env names (make test builds it), or pkg built for the test.
func goBinary(t *testing.T, env, name, pkg string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", p, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return p
}

func container(cpu string, limits bool) []corev1.Container {
	c := corev1.Container{Name: "c", Image: "registry.invalid/app:1"}
	if cpu != "" {
		q := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}
		c.Resources.Requests = q
		if limits {
			c.Resources.Limits = q
		}
	}
	return []corev1.Container{c}
}

func controllerOf(kind string, m metav1.ObjectMeta, apiVersion string) []metav1.OwnerReference {
	return []metav1.OwnerReference{*ctrl(apiVersion, kind, m.Name, string(m.UID))}
}

func TestAgainstARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	s := startAPIServer(t)
	rc := &rest.Config{Host: s.url, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	kubeconfig := s.kubeconfig(dir)
	bin := identityBinary(t)
	for _, ns := range []string{"shop", "batch"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "x"}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: container("100m", false)}}

	// a Deployment and the ReplicaSet its controller would make
	dep, err := cs.AppsV1().Deployments("shop").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	must(t, err)
	rset, err := cs.AppsV1().ReplicaSets("shop").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f7",
		OwnerReferences: controllerOf("Deployment", dep.ObjectMeta, "apps/v1")},
		Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	must(t, err)
	sts, err := cs.AppsV1().StatefulSets("shop").Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Selector: sel, Template: tmpl, ServiceName: "db"}}, metav1.CreateOptions{})
	must(t, err)
	jobTmpl := tmpl
	jobTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	cron, err := cs.BatchV1().CronJobs("batch").Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTmpl}}}},
		metav1.CreateOptions{})
	must(t, err)
	cronJob, err := cs.BatchV1().Jobs("batch").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29170",
		OwnerReferences: controllerOf("CronJob", cron.ObjectMeta, "batch/v1")}, Spec: batchv1.JobSpec{Template: jobTmpl}}, metav1.CreateOptions{})
	must(t, err)
	plainJob, err := cs.BatchV1().Jobs("batch").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "reindex"},
		Spec: batchv1.JobSpec{Template: jobTmpl}}, metav1.CreateOptions{})
	must(t, err)

	uids := map[string]types.UID{}
	mkpod := func(ns, name, nodeName string, owners []metav1.OwnerReference, cpu string, limits bool) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Labels: labels},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: container(cpu, limits), RestartPolicy: corev1.RestartPolicyNever}}
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
		uids[name] = got.UID
	}
	rsRef := controllerOf("ReplicaSet", rset.ObjectMeta, "apps/v1")
	mkpod("shop", "web-5d8f7-a1", "node-a", rsRef, "100m", false) // Burstable
	mkpod("shop", "web-5d8f7-b2", "node-b", rsRef, "100m", false)
	mkpod("shop", "db-0", "node-a", controllerOf("StatefulSet", sts.ObjectMeta, "apps/v1"), "500m", true) // Guaranteed
	mkpod("shop", "db-1", "node-b", controllerOf("StatefulSet", sts.ObjectMeta, "apps/v1"), "500m", true)
	mkpod("shop", "debug", "node-a", nil, "", false) // BestEffort
	mkpod("batch", "nightly-29170-x", "node-b", controllerOf("Job", cronJob.ObjectMeta, "batch/v1"), "100m", false)
	mkpod("batch", "reindex-y", "node-a", controllerOf("Job", plainJob.ObjectMeta, "batch/v1"), "", false)

	type agent struct {
		p       *proc
		file    string
		enforce string // the cgroups incidents may cap: shop's pods, not protected
	}
	agents := map[string]*agent{}
	for _, n := range []string{"node-a", "node-b"} {
		a := &agent{file: filepath.Join(dir, n+".labels"), enforce: filepath.Join(dir, n+".enforce")}
		a.p = spawn(t, bin, "--kubeconfig", kubeconfig, "--node", n, "--labels-file", a.file, "--debounce", "50ms", "--retry", "200ms",
			"--enforce-file", a.enforce, "--enforce-namespaces", "shop", "--annotation-namespaces", "shop")
		agents[n] = a
	}
	// expect: node -> pod -> "job class [protected]"; every pod has its two cgroup lines
	// client-go's reflector retries a lost watch with a backoff that grows to 30 s
	expect := func(what, n string, want map[string]string) {
		t.Helper()
		a := agents[n]
		h := &harness{t: t, path: a.file, logs: a.p.log, timeout: 60 * time.Second}
		h.await(what+" on "+n, func(m map[string][]string) bool {
			if len(m) != 2*len(want) {
				return false
			}
			count := map[string]int{}
			for _, f := range m {
				if w, ok := want[f[1]]; !ok || f[0]+" "+strings.Join(f[2:], " ") != w {
					return false
				}
				count[f[1]]++
			}
			for name := range want {
				if count[name] != 2 {
					return false
				}
			}
			return true
		})
	}
	// what each node's file should say, changed as the test goes
	want := map[string]map[string]string{
		"node-a": {"web-5d8f7-a1": "shop/deployment/web batch", "db-0": "shop/statefulset/db latency_sensitive",
			"debug": "shop/pod/debug best_effort", "reindex-y": "batch/job/reindex best_effort"},
		"node-b": {"web-5d8f7-b2": "shop/deployment/web batch", "db-1": "shop/statefulset/db latency_sensitive",
			"nightly-29170-x": "batch/cronjob/nightly batch"},
	}
	// the enforce file names both cgroups of each pod of shop that is not protected, and no other
	expectEnforce := func(what, n string) {
		t.Helper()
		var names []string
		for name, w := range want[n] {
			if strings.HasPrefix(w, "shop/") && !strings.HasSuffix(w, " protected") {
				names = append(names, name, name)
			}
		}
		sort.Strings(names)
		var got []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			b, _ := os.ReadFile(agents[n].file)
			m := parseLabels(t, string(b))
			e, _ := os.ReadFile(agents[n].enforce)
			got = nil
			for _, l := range strings.Split(string(e), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					got = append(got, strings.Join(m[l][1:2], ""))
				}
			}
			sort.Strings(got)
			if strings.Join(got, ",") == strings.Join(names, ",") {
				return
			}
		}
		t.Fatalf("%s on %s: the enforce file names %q, want %q", what, n, got, names)
	}
	expectBoth := func(what string) {
		t.Helper()
		for _, n := range []string{"node-a", "node-b"} {
			expect(what, n, want[n])
			expectEnforce(what, n)
		}
	}
	expectBoth("the first mapping")
	// the paths are the kubelet's for each QoS class
	if b, _ := os.ReadFile(agents["node-a"].file); !bytes.Contains(b, []byte("kubepods/burstable/pod"+string(uids["web-5d8f7-a1"])+" ")) ||
		!bytes.Contains(b, []byte("kubepods/pod"+string(uids["db-0"])+" ")) ||
		!bytes.Contains(b, []byte(sd("besteffort", string(uids["debug"]))+" ")) {
		t.Fatalf("paths:\n%s", b)
	}

	// relabelled: annotations on a running pod
	patch := func(ns, name, body string) {
		_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		must(t, err)
	}
	patch("shop", "web-5d8f7-a1", `{"metadata":{"annotations":{"cpi2.io/task-class":"best_effort"}}}`)
	patch("shop", "db-1", `{"metadata":{"annotations":{"cpi2.io/protected":"true","cpi2.io/task-class":"batch"}}}`)
	want["node-a"]["web-5d8f7-a1"] = "shop/deployment/web best_effort"
	want["node-b"]["db-1"] = "shop/statefulset/db batch protected"
	expectBoth("relabelled")

	// deleted (no kubelet: at once)
	zero := int64(0)
	must(t, cs.CoreV1().Pods("shop").Delete(ctx, "debug", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	must(t, cs.CoreV1().Pods("batch").Delete(ctx, "nightly-29170-x", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	delete(want["node-a"], "debug")
	delete(want["node-b"], "nightly-29170-x")
	expectBoth("deleted")

	// the API server goes away: the files keep the last mapping and the agents keep running
	before, _ := os.ReadFile(agents["node-a"].file)
	s.kas.cmd.Process.Signal(syscall.SIGKILL)
	s.kas.cmd.Wait()
	time.Sleep(3 * time.Second)
	if after, _ := os.ReadFile(agents["node-a"].file); !bytes.Equal(before, after) {
		t.Fatalf("the file changed while the API server was away:\n%s\n%s", before, after)
	}
	for n, a := range agents {
		if a.p.cmd.ProcessState != nil {
			t.Fatalf("%s's agent exited while the API server was away:\n%s", n, a.p.log.String())
		}
	}
	// back: the watch resumes and a new pod is mapped
	s.start()
	mkpod("shop", "web-5d8f7-c3", "node-a", rsRef, "100m", false)
	want["node-a"]["web-5d8f7-c3"] = "shop/deployment/web batch"
	expect("after the API server came back", "node-a", want["node-a"])

	// the agents' peak memory, for the log
	for n, a := range agents {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.p.cmd.Process.Pid)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "VmHWM:") {
					t.Logf("%s's agent: %s", n, strings.Join(strings.Fields(l), " "))
				}
			}
		}
	}

	// SIGTERM: exit 0 within the bound, the file kept
	a := agents["node-b"]
	a.p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- a.p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, a.p.log.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit within 10 s of SIGTERM")
	}
	if b, _ := os.ReadFile(a.file); len(parseLabels(t, string(b))) != 4 {
		t.Fatalf("after SIGTERM: %s", b)
	}
	if log := agents["node-a"].p.log.String(); !strings.Contains(log, "field selector spec.nodeName=node-a") {
		t.Errorf("log:\n%s", log)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
