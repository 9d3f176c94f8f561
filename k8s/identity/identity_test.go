package main

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// syncBuffer is a log both the component and the test touch.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness runs one identity component over a fake clientset.
type harness struct {
	t       *testing.T
	client  *fake.Clientset
	id      *Identity
	path    string
	logs    *syncBuffer
	cancel  context.CancelFunc
	done    chan error
	fields  chan string // the field selector of every list and watch of pods
	watches atomic.Int32
	timeout time.Duration // of await; 10 s if zero
}

func testConfig(dir string) Config {
	return Config{Node: node, LabelsFile: filepath.Join(dir, "labels"), Drivers: []string{DriverCgroupfs, DriverSystemd},
		Debounce: 10 * time.Millisecond, Retry: 50 * time.Millisecond, MaxPods: 100, Namespaces: map[string]bool{},
		Annotations: EveryNamespace}
}

// start runs the component over a fake clientset holding objs; prepare, if given, adds the
// test's reactors before anything runs.
func start(t *testing.T, cfg Config, ownerTTL time.Duration, prepare func(*fake.Clientset), objs ...runtime.Object) *harness {
	h := &harness{t: t, client: fake.NewClientset(objs...), path: cfg.LabelsFile, logs: &syncBuffer{},
		done: make(chan error, 1), fields: make(chan string, 100)}
	h.client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		h.fields <- a.(k8stesting.ListAction).GetListRestrictions().Fields.String()
		return false, nil, nil
	})
	h.client.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		h.fields <- a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.String()
		h.watches.Add(1)
		return false, nil, nil
	})
	if prepare != nil {
		prepare(h.client)
	}
	owners := &APIOwners{Client: h.client, TTL: ownerTTL, MaxSize: 100, Now: time.Now}
	h.id = New(cfg, h.client, owners, log.New(h.logs, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.id.Run(ctx, false) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Error("Run did not return within 10 s of the cancel")
	}
}

// await polls the labels file until want says it is right (bounded).
func (h *harness) await(what string, want func(m map[string][]string) bool) map[string][]string {
	h.t.Helper()
	timeout := h.timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	var m map[string][]string
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(h.path); err == nil {
			if m = parseLabels(h.t, string(b)); want(m) {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(h.path)
	h.t.Fatalf("%s: not within %v; file:\n%s\nlog:\n%s", what, timeout, b, h.logs.String())
	return nil
}

// awaitWatch waits until the informer watches (the fake clientset does not replay what
// happened between its list and its watch).
func (h *harness) awaitWatch() {
	deadline := time.Now().Add(10 * time.Second)
	for h.watches.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
}

func line(m map[string][]string, path string) string { return strings.Join(m[path], " ") }

const (
	uidWeb   = "aaaaaaaa-0000-4000-8000-000000000001"
	uidDB    = "aaaaaaaa-0000-4000-8000-000000000002"
	uidBare  = "aaaaaaaa-0000-4000-8000-000000000003"
	uidCron  = "aaaaaaaa-0000-4000-8000-000000000004"
	uidOther = "aaaaaaaa-0000-4000-8000-000000000005"
	uidEvil  = "aaaaaaaa-0000-4000-8000-000000000006"
	uidRS    = "bbbbbbbb-0000-4000-8000-000000000001"
	uidJob   = "bbbbbbbb-0000-4000-8000-000000000002"
)

func cg(id string) string { return "kubepods/burstable/pod" + id }

func sd(tier, id string) string {
	e := strings.ReplaceAll(id, "-", "_")
	if tier == "" {
		return "kubepods.slice/kubepods-pod" + e + ".slice"
	}
	return "kubepods.slice/kubepods-" + tier + ".slice/kubepods-" + tier + "-pod" + e + ".slice"
}

// The file follows the pods of this node: created, relabelled, finished, deleted; the watch
// is on this node only; a pod of another node and a hostile pod never reach the file.
func TestIdentityFollowsPods(t *testing.T) {
	cfg := testConfig(t.TempDir())
	web := pod("shop", "web-7d9f-x1", uidWeb, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-7d9f", uidRS), nil)
	db := pod("shop", "db-0", uidDB, corev1.PodQOSGuaranteed, ctrl("apps/v1", "StatefulSet", "db", "s"), nil)
	bare := pod("tools", "debug", uidBare, corev1.PodQOSBestEffort, nil, nil)
	cron := pod("shop", "nightly-29-abcde", uidCron, corev1.PodQOSBurstable, ctrl("batch/v1", "Job", "nightly-29", uidJob), nil)
	other := pod("shop", "web-7d9f-x2", uidOther, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-7d9f", uidRS), nil)
	other.Spec.NodeName = "node-b" // the fake clientset ignores field selectors: the check in MapPod holds
	evil := pod("shop", "evil", uidEvil, corev1.PodQOSBurstable, ctrl("apps/v1", "StatefulSet", "db x batch\nkubepods/pod1", "s"), nil)
	h := start(t, cfg, time.Minute, nil, web, db, bare, cron, other, evil,
		rs("shop", "web-7d9f", uidRS, ctrl("apps/v1", "Deployment", "web", "d")),
		job("shop", "nightly-29", uidJob, ctrl("batch/v1", "CronJob", "nightly", "c")))

	m := h.await("the first mapping", func(m map[string][]string) bool { return len(m) == 8 })
	want := map[string]string{
		cg(uidWeb):                          "shop/deployment/web web-7d9f-x1 batch",
		sd("burstable", uidWeb):             "shop/deployment/web web-7d9f-x1 batch",
		"kubepods/pod" + uidDB:              "shop/statefulset/db db-0 latency_sensitive",
		sd("", uidDB):                       "shop/statefulset/db db-0 latency_sensitive",
		"kubepods/besteffort/pod" + uidBare: "tools/pod/debug debug best_effort",
		sd("besteffort", uidBare):           "tools/pod/debug debug best_effort",
		cg(uidCron):                         "shop/cronjob/nightly nightly-29-abcde batch",
		sd("burstable", uidCron):            "shop/cronjob/nightly nightly-29-abcde batch",
	}
	for p, w := range want {
		if line(m, p) != w {
			t.Errorf("%s: got %q, want %q", p, line(m, p), w)
		}
	}
	if !strings.Contains(h.logs.String(), `not mapped: refused: owner name "db x batch\nkubepods/pod1"`) {
		t.Errorf("the hostile pod is not reported:\n%s", h.logs.String())
	}
	h.awaitWatch()

	// relabelled: the annotations win over the QoS class
	ctx := context.Background()
	db.Annotations = map[string]string{AnnotationClass: "batch", AnnotationProtected: "true"}
	if _, err := h.client.CoreV1().Pods("shop").Update(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.await("the relabelled pod", func(m map[string][]string) bool {
		return line(m, sd("", uidDB)) == "shop/statefulset/db db-0 batch protected"
	})
	// deleted: its lines go
	if err := h.client.CoreV1().Pods("shop").Delete(ctx, web.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.await("the deleted pod", func(m map[string][]string) bool { return len(m) == 6 && m[cg(uidWeb)] == nil })
	// finished: its cgroup is gone, so are its lines
	cron.Status.Phase = corev1.PodSucceeded
	if _, err := h.client.CoreV1().Pods("shop").UpdateStatus(ctx, cron, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	m = h.await("the finished pod", func(m map[string][]string) bool { return len(m) == 4 && m[cg(uidCron)] == nil })
	h.stop()
	writes := h.id.Writes() // after the stop: the last write's count follows its file by a moment
	// stopped: the file keeps the last mapping
	if b, _ := os.ReadFile(h.path); len(parseLabels(t, string(b))) != 4 {
		t.Fatalf("after stop: %s", b)
	}
	if writes < 4 {
		t.Errorf("%d writes for 4 changes", writes)
	}
	close(h.fields)
	n := 0
	for f := range h.fields {
		n++
		if f != "spec.nodeName="+node {
			t.Errorf("a list or watch of pods with field selector %q", f)
		}
	}
	if n < 2 {
		t.Errorf("%d lists and watches of pods seen", n)
	}
}

// A pod whose owner cannot be read keeps the job it had (annotations still apply); a new
// one waits, and is mapped once the API answers again.
func TestIdentityKeepsTheLastJob(t *testing.T) {
	cfg := testConfig(t.TempDir())
	const uidRS2 = "bbbbbbbb-0000-4000-8000-000000000009"
	web := pod("shop", "web-1-a", uidWeb, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-1", uidRS), nil)
	var down atomic.Bool
	unreachable := func(c *fake.Clientset) {
		c.PrependReactor("get", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
			if down.Load() {
				return true, nil, errors.New("connection refused")
			}
			return false, nil, nil
		})
	}
	h := start(t, cfg, time.Nanosecond, unreachable, web,
		rs("shop", "web-1", uidRS, ctrl("apps/v1", "Deployment", "web", "d")),
		rs("shop", "web-2", uidRS2, ctrl("apps/v1", "Deployment", "web", "d")))
	h.await("the first mapping", func(m map[string][]string) bool { return line(m, cg(uidWeb)) == "shop/deployment/web web-1-a batch" })
	h.awaitWatch()

	down.Store(true)
	ctx := context.Background()
	web.Annotations = map[string]string{AnnotationClass: "best_effort"}
	if _, err := h.client.CoreV1().Pods("shop").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	web2 := pod("shop", "web-2-b", uidDB, corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", "web-2", uidRS2), nil)
	if _, err := h.client.CoreV1().Pods("shop").Create(ctx, web2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.await("the kept job", func(m map[string][]string) bool {
		return line(m, cg(uidWeb)) == "shop/deployment/web web-1-a best_effort" && len(m) == 2
	})
	time.Sleep(200 * time.Millisecond) // a few retries while the API is away
	if b, _ := os.ReadFile(h.path); strings.Contains(string(b), "web-2-b") {
		t.Fatalf("a pod of an unreadable owner was mapped:\n%s", b)
	}
	for _, s := range []string{"keeps job shop/deployment/web: its owner could not be read: connection refused",
		"not mapped yet: its owner could not be read"} {
		if !strings.Contains(h.logs.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, h.logs.String())
		}
	}
	down.Store(false)
	h.await("the retry", func(m map[string][]string) bool {
		return line(m, cg(uidDB)) == "shop/deployment/web web-2-b batch" && len(m) == 4
	})
}

// Before the first list of pods nothing is written: the file of the last run stays.
func TestIdentityWritesNothingBeforeTheFirstList(t *testing.T) {
	cfg := testConfig(t.TempDir())
	if err := os.WriteFile(cfg.LabelsFile, []byte("kubepods/podx ns/pod/x x batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	lists := atomic.Int32{}
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return true, nil, errors.New("the server is currently unable to handle the request")
	})
	id := New(cfg, client, nil, log.New(&syncBuffer{}, "", 0))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := id.Run(ctx, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(cfg.LabelsFile); string(b) != "kubepods/podx ns/pod/x x batch\n" || lists.Load() == 0 {
		t.Fatalf("lists %d, file %q", lists.Load(), b)
	}
}

// Only opted-in namespaces reach the file.
func TestIdentityNamespaces(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Namespaces = map[string]bool{"shop": true}
	h := start(t, cfg, time.Minute, nil,
		pod("shop", "a", uidWeb, corev1.PodQOSBurstable, nil, nil),
		pod("tools", "b", uidBare, corev1.PodQOSBurstable, nil, nil))
	m := h.await("opt-in", func(m map[string][]string) bool { return len(m) == 2 })
	if line(m, cg(uidWeb)) != "shop/pod/a a batch" {
		t.Fatalf("%q", m)
	}
}

// awaitEnforce waits until the enforce file lists exactly want (sorted).
func (h *harness) awaitEnforce(path, what string, want ...string) {
	h.t.Helper()
	sort.Strings(want)
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = nil
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				got = append(got, l)
			}
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
	}
	h.t.Fatalf("%s: enforce file %q, want %q\nlog:\n%s", what, got, want, h.logs.String())
}

// Per-namespace enforcement: every pod is mapped (measured everywhere), and the enforce file
// lists the cgroups (both drivers) of the enforcing namespaces' pods only, never a protected
// pod; it follows a pod made protected and a pod deleted.
func TestIdentityEnforceFile(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.EnforceFile = filepath.Join(filepath.Dir(cfg.LabelsFile), "enforce")
	cfg.EnforceNamespaces = map[string]bool{"shop": true}
	web := pod("shop", "a", uidWeb, corev1.PodQOSBurstable, nil, nil)
	db := pod("shop", "db", uidDB, corev1.PodQOSBestEffort, nil, nil)
	h := start(t, cfg, time.Minute, nil, web, db, pod("tools", "b", uidBare, corev1.PodQOSBurstable, nil, nil))
	h.await("every pod measured", func(m map[string][]string) bool { return len(m) == 6 })
	h.awaitEnforce(cfg.EnforceFile, "shop's pods", cg(uidWeb), sd("burstable", uidWeb),
		"kubepods/besteffort/pod"+uidDB, sd("besteffort", uidDB))
	h.awaitWatch()
	ctx := context.Background()
	db.Annotations = map[string]string{AnnotationProtected: "true"}
	if _, err := h.client.CoreV1().Pods("shop").Update(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.awaitEnforce(cfg.EnforceFile, "the protected pod left out", cg(uidWeb), sd("burstable", uidWeb))
	if err := h.client.CoreV1().Pods("shop").Delete(ctx, web.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.awaitEnforce(cfg.EnforceFile, "the deleted pod left out")
	if m := h.await("the others still measured", func(m map[string][]string) bool { return len(m) == 4 }); line(m, cg(uidBare)) != "tools/pod/b b batch" {
		t.Fatalf("%q", m)
	}
	if !strings.Contains(h.logs.String(), "0 cgroups may be capped") {
		t.Errorf("no log of the last write:\n%s", h.logs.String())
	}
}

// The owner cache: one get per owner within the TTL, another after it, none kept for an
// error, and never more entries than its bound.
func TestOwnersCache(t *testing.T) {
	now := time.Unix(1000, 0)
	o := owners(rs("ns", "r", uidRS, ctrl("apps/v1", "Deployment", "d", "x")))
	o.Now = func() time.Time { return now }
	o.MaxSize = 3
	ref := *ctrl("apps/v1", "ReplicaSet", "r", uidRS)
	for i := 0; i < 3; i++ {
		if p, err := o.Parent(context.Background(), "ns", ref); err != nil || p == nil || p.Name != "d" {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if o.Gets() != 1 {
		t.Fatalf("%d gets within the TTL", o.Gets())
	}
	now = now.Add(2 * time.Minute)
	o.Parent(context.Background(), "ns", ref)
	if o.Gets() != 2 {
		t.Fatalf("%d gets after the TTL", o.Gets())
	}
	for i := 0; i < 10; i++ {
		r := *ctrl("apps/v1", "ReplicaSet", "gone", "cccccccc-0000-4000-8000-00000000000"+string(rune('0'+i)))
		o.Parent(context.Background(), "ns", r)
	}
	if len(o.cache) > o.MaxSize {
		t.Fatalf("%d entries, bound %d", len(o.cache), o.MaxSize)
	}
	o.Client.(*fake.Clientset).PrependReactor("get", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("timeout")
	})
	now = now.Add(time.Hour)
	before := o.Gets()
	for i := 0; i < 2; i++ {
		if _, err := o.Parent(context.Background(), "ns", ref); err == nil {
			t.Fatal("an API error was not returned")
		}
	}
	if o.Gets() != before+2 {
		t.Fatal("an API error was cached")
	}
}
