package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// class and protection of its pod, and the QoS-level cgroups are not.
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
	web := pod("shop", "web-1", uidWeb, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-7d9f", uidRS), nil)
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
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var s struct {
			Task        string `json:"task"`
			Job         string `json:"job"`
			TaskID      string `json:"task_id"`
			TaskClass   string `json:"task_class"`
			IsProtected bool   `json:"is_protected"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		line := s.Job + " " + s.TaskID + " " + classes[s.TaskClass]
		if s.IsProtected {
			line += " protected"
		}
		got[s.Task] = line
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
