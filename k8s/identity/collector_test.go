package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// collectorBinary is the collector of this tree (make -C collectors build), or $CPI2_COLLECTOR.
func collectorBinary(t *testing.T) string {
	if p := os.Getenv("CPI2_COLLECTOR"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../build/c/collectors/collector/cpi2-collector")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the collector is not built (%s: %v): make -C collectors build", p, err)
	}
	return p
}

// The file the component writes is read by the real collector: on a cgroup v2 tree laid out
// as the kubelet does with both drivers, every pod cgroup is published with the job, task id,
// class and protection of its pod, and the QoS-level cgroups are not. The web pod asks for its
// metrics endpoint to be scraped (an HTTP server of the test on the pod's IP, 127.0.0.1 here,
// whose counters move 10 requests and 0.5 s of latency per answer): its samples carry
// cpu_per_op and a latency of 0.05 s, the others neither.
func TestCollectorReadsTheFile(t *testing.T) {
	bin := collectorBinary(t)
	const v2 = "/sys/fs/cgroup/unified"
	if os.Getuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	root := filepath.Join(v2, fmt.Sprintf("cpi2-identity-test-%d", os.Getpid()))
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Skipf("no writable cgroup v2 hierarchy at %s: %v", v2, err)
	}
	t.Cleanup(func() { removeTree(root) })

	cfg := testConfig(t.TempDir())
	db := pod("shop", "db-0", uidDB, corev1.PodQOSGuaranteed, ctrl("apps/v1", "StatefulSet", "db", "s"),
		map[string]string{AnnotationProtected: "true"})
	bare := pod("tools", "debug", uidBare, corev1.PodQOSBestEffort, nil, map[string]string{AnnotationClass: "batch"})
	var answers atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := answers.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE reqs_total counter\nreqs_total{code=\"200\"} %d\n# TYPE lat summary\nlat_sum %g\nlat_count %d\n",
			10*n, 0.5*float64(n), 10*n)
	}))
	defer srv.Close()
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	web := pod("shop", "web-1", uidWeb, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-7d9f", uidRS),
		map[string]string{AnnotationScrape: "true", AnnotationPort: port, AnnotationWorkCounter: `reqs_total{code=~"2.."}`,
			AnnotationLatencyMetric: "lat"})
	web.Status.PodIP = "127.0.0.1"
	client := fake.NewClientset(db, bare, web, rs("shop", "web-7d9f", uidRS, ctrl("apps/v1", "Deployment", "web", "d")))
	owners := &APIOwners{Client: client, TTL: time.Minute, MaxSize: 10, Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := New(cfg, client, owners, log.New(&syncBuffer{}, "", 0)).Run(ctx, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(cfg.LabelsFile)
	want := parseLabels(t, string(data))
	if len(want) != 6 {
		t.Fatalf("the file:\n%s", data)
	}
	for p := range want {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "--once", "--events", "task-clock", "--window-s", "0.2", "--roots", root,
		"--labels-file", cfg.LabelsFile, "--host", "node-a")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("collector: %v\n%s", err, stderr.String())
	}
	classes := map[string]string{"LATENCY_SENSITIVE": "latency_sensitive", "BATCH": "batch", "BEST_EFFORT": "best_effort"}
	got := map[string]string{}
	service := map[string][2]*float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var s struct {
			Task        string   `json:"task"`
			Job         string   `json:"job"`
			TaskID      string   `json:"task_id"`
			TaskClass   string   `json:"task_class"`
			IsProtected bool     `json:"is_protected"`
			CPUPerOp    *float64 `json:"cpu_per_op"`
			Latency     *float64 `json:"latency"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		line := s.Job + " " + s.TaskID + " " + classes[s.TaskClass]
		if s.IsProtected {
			line += " protected"
		}
		got[s.Task] = line
		service[s.Task] = [2]*float64{s.CPUPerOp, s.Latency}
	}
	if len(got) != len(want) {
		t.Errorf("%d samples for %d labelled cgroups:\n%s\n%s", len(got), len(want), out, stderr.String())
	}
	for p, f := range want {
		if got[p] != strings.Join(f, " ") {
			t.Errorf("%s: collector published %q, file says %q", p, got[p], strings.Join(f, " "))
		}
	}
	if got["kubepods/pod"+uidDB] != "shop/statefulset/db db-0 latency_sensitive protected" ||
		got[sd("besteffort", uidBare)] != "tools/pod/debug debug batch" ||
		got[sd("burstable", uidWeb)] != "shop/deployment/web web-1 batch" {
		t.Errorf("samples: %q", got)
	}
	for p, v := range service {
		scraped := strings.Contains(p, uidWeb) || strings.Contains(p, strings.ReplaceAll(uidWeb, "-", "_"))
		if scraped && (v[0] == nil || v[1] == nil || *v[1] != 0.05) {
			t.Errorf("%s: cpu_per_op %v latency %v, want both, latency 0.05\n%s", p, v[0], v[1], stderr.String())
		}
		if !scraped && (v[0] != nil || v[1] != nil) {
			t.Errorf("%s: service signals without an endpoint", p)
		}
	}
	if answers.Load() < 4 {
		t.Errorf("%d scrapes of two web cgroups, want a start and an end each", answers.Load())
	}
}

// removeTree removes a cgroup tree, deepest first (cgroups go with rmdir, not unlink).
func removeTree(root string) {
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}
