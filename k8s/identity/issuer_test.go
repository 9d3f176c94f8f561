package main

// cpi2-issuer (issuer/) against the real kube-apiserver: tokens the API server issues for pods
// bound to nodes (TokenRequest, as the kubelet asks for a projected volume), the issuer's
// TokenReview, and the host key of schemas/golden/hostauth.json.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpi2/k8s/identity/issuer"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

type hostauthVectors struct {
	MasterHex string `json:"master_hex"`
	KeyID     string `json:"key_id"`
	Vectors   []struct {
		Host       string `json:"host"`
		HostKeyHex string `json:"host_key_hex"`
	} `json:"vectors"`
}

func loadVectors(t *testing.T) hostauthVectors {
	raw, err := os.ReadFile("../../schemas/golden/hostauth.json")
	if err != nil {
		t.Fatal(err)
	}
	var v hostauthVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestHostKeyVectors(t *testing.T) {
	v := loadVectors(t)
	master, _ := hex.DecodeString(v.MasterHex)
	for _, row := range v.Vectors {
		if got := hex.EncodeToString(issuer.HostKey(master, row.Host)); got != row.HostKeyHex {
			t.Errorf("%s: %s, want %s", row.Host, got, row.HostKeyHex)
		}
	}
}

func TestIssuerAgainstARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	s := startAPIServer(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.url, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	must(t, err)
	ctx := context.Background()
	dir := t.TempDir()
	v := loadVectors(t)
	masterFile := filepath.Join(dir, "master")
	must(t, os.WriteFile(masterFile, []byte(v.MasterHex+"\n"), 0o600))

	for _, ns := range []string{"cpi2", "shop"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
		_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agents"}}, metav1.CreateOptions{})
		must(t, err)
	}
	for _, n := range []string{"node-a", "node-b"} {
		_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		must(t, err)
	}
	agent := map[string]string{"app.kubernetes.io/component": "agents"}
	pod := func(ns, name, node string, labels map[string]string) *corev1.Pod {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "agents", Containers: container("", false)}}, metav1.CreateOptions{})
		must(t, err)
		return p
	}
	token := func(p *corev1.Pod, audience string) string {
		req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}}}
		if p != nil {
			req.Spec.BoundObjectRef = &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID}
		}
		ns := "cpi2"
		if p != nil {
			ns = p.Namespace
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "agents", req, metav1.CreateOptions{})
		must(t, err)
		return tr.Status.Token
	}
	agentA := pod("cpi2", "agents-a", "node-a", agent)
	agentB := pod("cpi2", "agents-b", "node-b", agent)
	other := pod("cpi2", "not-an-agent", "node-a", map[string]string{"app": "x"})
	elsewhere := pod("shop", "agents-x", "node-a", agent)
	gone := pod("cpi2", "agents-gone", "node-a", agent)
	goneToken := token(gone, "cpi2-issuer")
	must(t, cs.CoreV1().Pods("cpi2").Delete(ctx, gone.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))

	port := freePort(t)
	bin := goBinary(t, "CPI2_ISSUER", "cpi2-issuer", "./cmd/cpi2-issuer")
	p := spawn(t, bin, "--kubeconfig", s.kubeconfig(dir), "--master-file", masterFile, "--key-id", v.KeyID,
		"--namespace", "cpi2", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/credentials", port)
	ask := func(token string) (int, string) {
		t.Helper()
		for t0 := time.Now(); ; time.Sleep(100 * time.Millisecond) {
			req, _ := http.NewRequest("POST", url, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				if time.Since(t0) > 30*time.Second {
					t.Fatalf("issuer not answering: %v\n%s", err, p.log.String())
				}
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(body)
		}
	}
	want := func(host string) string {
		for _, r := range v.Vectors {
			if r.Host == host {
				return fmt.Sprintf("cpi2.host=%s\ncpi2.host.key=%s\ncpi2.host.key.id=%s\n", host, r.HostKeyHex, v.KeyID)
			}
		}
		t.Fatalf("no vector for %s", host)
		return ""
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		host string
	}{{"agent on node-a", agentA, "node-a"}, {"agent on node-b", agentB, "node-b"}} {
		code, body := ask(token(c.pod, "cpi2-issuer"))
		if code != 200 || body != want(c.host) {
			t.Errorf("%s: %d %q, want 200 %q", c.name, code, body, want(c.host))
		}
	}
	for _, c := range []struct {
		name, token, why string
		code             int
	}{
		{"no token", "", "no bearer token", 401},
		{"not a token", "eyJhbGciOiJSUzI1NiJ9.e30.AAAA", "not valid", 401},
		{"a token longer than the bound", strings.Repeat("a", issuer.MaxToken+1), "longer than", 401},
		{"an agent's token for another audience", token(agentA, "kafka"), "not valid for audience", 401},
		{"a service account token bound to no pod", token(nil, "cpi2-issuer"), "not bound to a pod", 403},
		{"a pod that is not an agent", token(other, "cpi2-issuer"), "is not an agent", 403},
		{"an agent-labelled pod of another namespace", token(elsewhere, "cpi2-issuer"), "not a service account of namespace", 403},
		{"the token of a deleted pod", goneToken, "not valid", 401},
	} {
		code, body := ask(c.token)
		if code != c.code || !strings.Contains(body, c.why) || strings.Contains(body, "cpi2.host.key=") {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, body, c.code, c.why)
		}
	}
	// a pod on node-b cannot get node-a's key: the review names the node the token is bound to
	if _, body := ask(token(agentB, "cpi2-issuer")); strings.Contains(body, want("node-a")) {
		t.Errorf("node-b's pod got node-a's key")
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+token(agentA, "cpi2-issuer"))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("a request with a body: %v %v", resp, err)
	}
	if get, err := http.Get(url); err != nil || get.StatusCode != 405 {
		t.Errorf("GET: %v %v", get, err)
	}
	// the agents' init step: the base client file with the node's lines appended; a refusal
	// ends it at once with the reason
	base := filepath.Join(dir, "kafka-collector.properties")
	must(t, os.WriteFile(base, []byte("security.protocol=ssl\n"), 0o600))
	out := filepath.Join(dir, "out")
	must(t, os.Mkdir(out, 0o700))
	for _, c := range []struct {
		pod  *corev1.Pod
		ok   bool
		file string
	}{{agentA, true, "security.protocol=ssl\n\n" + want("node-a")}, {other, false, "is not an agent"}} {
		tf := filepath.Join(dir, "token")
		must(t, os.WriteFile(tf, []byte(token(c.pod, "cpi2-issuer")), 0o600))
		os.Remove(filepath.Join(out, "kafka-collector.properties"))
		res, err := exec.Command(bin, "fetch", "--url", url, "--token-file", tf, "--out-dir", out, base).CombinedOutput()
		got, _ := os.ReadFile(filepath.Join(out, "kafka-collector.properties"))
		if c.ok && (err != nil || string(got) != c.file) {
			t.Errorf("fetch for %s: %v %s, file %q, want %q", c.pod.Name, err, res, got, c.file)
		}
		if !c.ok && (err == nil || !strings.Contains(string(res), c.file) || got != nil) {
			t.Errorf("fetch for %s: %v %s, file %q", c.pod.Name, err, res, got)
		}
	}
	if strings.Contains(p.log.String(), v.MasterHex) {
		t.Errorf("the master in the issuer's log")
	}
}
