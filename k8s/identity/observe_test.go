package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// /metrics carries the agent's counts, the process's and the build's; /healthz is good within
// the bound after the last sync, 503 past it; other methods and paths are refused.
func TestMetricsAndHealth(t *testing.T) {
	id := New(Config{Node: "n1"}, nil, nil, log.New(io.Discard, "", 0))
	id.syncs.Add(3)
	id.syncErrors.Add(1)
	id.writes.Add(2)
	id.mapped.Store(5)
	id.synced.Store(true)
	srv := httptest.NewServer(id.handler(time.Minute))
	defer srv.Close()
	get := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("GET", "/metrics")
	for _, want := range []string{
		"# TYPE cpi2_identity_syncs_total counter\n", "cpi2_identity_syncs_total{result=\"ok\"} 3\n",
		"cpi2_identity_syncs_total{result=\"error\"} 1\n", "cpi2_identity_file_writes_total 2\n",
		"cpi2_identity_pods{state=\"mapped\"} 5\n", "cpi2_identity_synced 1\n", "\nprocess_cpu_seconds_total ",
		"\nprocess_resident_memory_bytes ", "cpi2_build_info{program=\"identity\",version=\"" + version + "\"} 1\n",
		"cpi2_identity_progress_bound_seconds 60\n",
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("/metrics: %d, no %q in\n%s", code, want, body)
		}
	}
	if code, body = get("GET", "/healthz"); code != 200 || !strings.HasPrefix(body, "ok: last progress ") {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	id.alive.Store(time.Now().Add(-2 * time.Minute).UnixNano())
	if code, body = get("GET", "/healthz"); code != 503 || !strings.HasPrefix(body, "unhealthy: no sync of the pods completed for 120.") {
		t.Fatalf("/healthz past the bound: %d %s", code, body)
	}
	if code, _ = get("POST", "/metrics"); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /metrics: %d", code)
	}
	if code, _ = get("GET", "/"); code != 404 {
		t.Fatalf("GET /: %d", code)
	}
	if code, body = get("HEAD", "/metrics"); code != 200 || body != "" {
		t.Fatalf("HEAD /metrics: %d %q", code, body)
	}
}

// --log-format json: every line, the agent's and client-go's, is one JSON object with
// libcpi2's fields; a bad value is refused.
func TestJSONLog(t *testing.T) {
	var out bytes.Buffer
	j := &jsonLog{out: &out}
	log.New(j, "", 0).Printf("identity: wrote %s: bad \xff byte", "/run/cpi2/labels")
	j.Write([]byte("E1128 07:00:00.000000       1 reflector.go:1] watch failed\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []map[string]string{
		{"level": "info", "module": "identity", "msg": "wrote /run/cpi2/labels: bad \uFFFD byte"},
		{"level": "error", "module": "client-go", "msg": "watch failed"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	for i, l := range lines {
		var got map[string]string
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Fatalf("line %d: %s = %q, want %q (%s)", i, k, got[k], v, l)
			}
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", got["time"]); err != nil {
			t.Fatalf("time %q: %v", got["time"], err)
		}
	}
	var stderr bytes.Buffer
	if rc := run([]string{"--node", "n1", "--log-format", "yaml"}, io.Discard, &stderr); rc != 2 || !strings.Contains(stderr.String(), "--log-format") {
		t.Fatalf("--log-format yaml: %d %q", rc, stderr.String())
	}
	stderr.Reset()
	if rc := run([]string{"--node", "n1", "--log-format", "json", "--kubeconfig", "/nonexistent"}, io.Discard, &stderr); rc != 2 {
		t.Fatalf("rc %d", rc)
	}
	var got map[string]string
	if err := json.Unmarshal(bytes.TrimSpace(stderr.Bytes()), &got); err != nil || !strings.HasPrefix(got["msg"], "kubeconfig: ") {
		t.Fatalf("%q: %v", stderr.String(), err)
	}
}
