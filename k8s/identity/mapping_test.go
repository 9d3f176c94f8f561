package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

const node = "node-a"

func ctrl(apiVersion, kind, name, uid string) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
}

func pod(ns, name, id string, qos corev1.PodQOSClass, owner *metav1.OwnerReference, ann map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(id), Annotations: ann},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{QOSClass: qos, Phase: corev1.PodRunning},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func rs(ns, name, id string, owner *metav1.OwnerReference) *appsv1.ReplicaSet {
	r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(id)}}
	if owner != nil {
		r.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return r
}

func job(ns, name, id string, owner *metav1.OwnerReference) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(id)}}
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return j
}

func owners(objs ...runtime.Object) *APIOwners {
	return &APIOwners{Client: fake.NewClientset(objs...), TTL: time.Minute, MaxSize: 100, Now: time.Now}
}

// Each workload kind gives its job: a Deployment through its ReplicaSet, a CronJob through its
// Job, the others directly, a bare pod its own.
func TestMapPodWorkloads(t *testing.T) {
	const ns = "shop"
	o := owners(
		rs(ns, "web-7d9f", "11111111-1111-4111-8111-111111111111", ctrl("apps/v1", "Deployment", "web", "21111111-1111-4111-8111-111111111111")),
		rs(ns, "lone-rs", "12111111-1111-4111-8111-111111111111", nil),
		rs(ns, "reborn-rs", "13111111-1111-4111-8111-111111111111", ctrl("apps/v1", "Deployment", "reborn", "23111111-1111-4111-8111-111111111111")),
		job(ns, "nightly-29000", "14111111-1111-4111-8111-111111111111", ctrl("batch/v1", "CronJob", "nightly", "24111111-1111-4111-8111-111111111111")),
		job(ns, "once", "15111111-1111-4111-8111-111111111111", nil),
	)
	cases := []struct {
		name  string
		owner *metav1.OwnerReference
		job   string
	}{
		{"deployment", ctrl("apps/v1", "ReplicaSet", "web-7d9f", "11111111-1111-4111-8111-111111111111"), "shop/deployment/web"},
		{"replicaset alone", ctrl("apps/v1", "ReplicaSet", "lone-rs", "12111111-1111-4111-8111-111111111111"), "shop/replicaset/lone-rs"},
		{"replicaset gone", ctrl("apps/v1", "ReplicaSet", "gone-rs", "19111111-1111-4111-8111-111111111111"), "shop/replicaset/gone-rs"},
		// a ReplicaSet of that name exists, but it is another object than the pod's owner
		{"replicaset of another uid", ctrl("apps/v1", "ReplicaSet", "reborn-rs", "99111111-1111-4111-8111-111111111111"), "shop/replicaset/reborn-rs"},
		{"statefulset", ctrl("apps/v1", "StatefulSet", "db", "31111111-1111-4111-8111-111111111111"), "shop/statefulset/db"},
		{"daemonset", ctrl("apps/v1", "DaemonSet", "agent", "32111111-1111-4111-8111-111111111111"), "shop/daemonset/agent"},
		{"cronjob", ctrl("batch/v1", "Job", "nightly-29000", "14111111-1111-4111-8111-111111111111"), "shop/cronjob/nightly"},
		{"job", ctrl("batch/v1", "Job", "once", "15111111-1111-4111-8111-111111111111"), "shop/job/once"},
		{"other controller", ctrl("v1", "ReplicationController", "old", "33111111-1111-4111-8111-111111111111"), "shop/replicationcontroller/old"},
		// a Kind named ReplicaSet in another API group is not followed
		{"foreign replicaset", ctrl("example.com/v1", "ReplicaSet", "web-7d9f", "11111111-1111-4111-8111-111111111111"), "shop/replicaset/web-7d9f"},
		{"bare pod", nil, "shop/pod/p-0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := pod(ns, "p-0", "01111111-1111-4111-8111-111111111111", corev1.PodQOSBurstable, c.owner, nil)
			task, err := MapPod(context.Background(), p, node, o, EveryNamespace)
			if err != nil {
				t.Fatal(err)
			}
			if task.Job != c.job || task.Pod != "p-0" || task.Class != ClassBatch || task.Protected {
				t.Fatalf("got %+v, want job %s task p-0 batch", task, c.job)
			}
		})
	}
	// an owner reference that is not the controller is not the workload
	p := pod(ns, "p-1", "01111111-1111-4111-8111-111111111112", corev1.PodQOSBurstable, nil, nil)
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "x"}}
	if task, err := MapPod(context.Background(), p, node, o, EveryNamespace); err != nil || task.Job != "shop/pod/p-1" {
		t.Fatalf("non-controller owner: %+v %v", task, err)
	}
}

// A pod of a namespace the operator did not list chooses neither its class nor its protection:
// a BestEffort pod annotated latency-sensitive and protected stays best-effort and unprotected
// (before, it was mapped so: exempt from caps, and its slowdowns capped its neighbours).
func TestMapPodAnnotationsOnlyWhereAllowed(t *testing.T) {
	ann := map[string]string{AnnotationClass: "latency_sensitive", AnnotationProtected: "true"}
	policy := AnnotationPolicy{Namespaces: map[string]bool{"trusted": true}}
	for _, c := range []struct {
		ns        string
		policy    AnnotationPolicy
		class     string
		protected bool
	}{
		{"tenant", policy, ClassBestEffort, false},
		{"tenant", AnnotationPolicy{}, ClassBestEffort, false},
		{"trusted", policy, ClassLatencySensitive, true},
		{"tenant", EveryNamespace, ClassLatencySensitive, true},
	} {
		p := pod(c.ns, "p", "01111111-1111-4111-8111-111111111111", corev1.PodQOSBestEffort, nil, ann)
		task, err := MapPod(context.Background(), p, node, nil, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(task.Notes, ";")
		if task.Class != c.class || task.Protected != c.protected || (c.class == ClassBestEffort) != strings.Contains(notes, "may not choose") {
			t.Errorf("%s %+v: class %s protected %v notes %q", c.ns, c.policy, task.Class, task.Protected, notes)
		}
	}
}

// The class follows the QoS class unless the annotation names a known class; protected
// follows its annotation.
func TestMapPodClass(t *testing.T) {
	cases := []struct {
		qos       corev1.PodQOSClass
		ann       map[string]string
		class     string
		protected bool
		note      string
	}{
		{corev1.PodQOSGuaranteed, nil, ClassLatencySensitive, false, ""},
		{corev1.PodQOSBurstable, nil, ClassBatch, false, ""},
		{corev1.PodQOSBestEffort, nil, ClassBestEffort, false, ""},
		{corev1.PodQOSGuaranteed, map[string]string{AnnotationClass: "batch"}, ClassBatch, false, ""},
		{corev1.PodQOSBestEffort, map[string]string{AnnotationClass: "Latency-Sensitive"}, ClassLatencySensitive, false, ""},
		{corev1.PodQOSBurstable, map[string]string{AnnotationClass: "best_effort"}, ClassBestEffort, false, ""},
		{corev1.PodQOSBurstable, map[string]string{AnnotationClass: "batch protected"}, ClassBatch, false, "ignored"},
		{corev1.PodQOSGuaranteed, map[string]string{AnnotationClass: "unknown"}, ClassLatencySensitive, false, "ignored"},
		{corev1.PodQOSBurstable, map[string]string{AnnotationProtected: "true"}, ClassBatch, true, ""},
		{corev1.PodQOSBurstable, map[string]string{AnnotationProtected: "false"}, ClassBatch, false, ""},
		{corev1.PodQOSBurstable, map[string]string{AnnotationProtected: "yes please"}, ClassBatch, false, "ignored"},
	}
	for i, c := range cases {
		p := pod("ns", "p", "01111111-1111-4111-8111-111111111111", c.qos, nil, c.ann)
		task, err := MapPod(context.Background(), p, node, nil, EveryNamespace)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		notes := strings.Join(task.Notes, ";")
		if task.Class != c.class || task.Protected != c.protected || !strings.Contains(notes, c.note) || (c.note == "" && notes != "") {
			t.Errorf("case %d (%s %v): got class %s protected %v notes %q", i, c.qos, c.ann, task.Class, task.Protected, notes)
		}
	}
}

// Fields that would break the file or the collector's parser refuse the whole pod.
func TestMapPodHostile(t *testing.T) {
	good := func() *corev1.Pod {
		return pod("ns", "p", "01111111-1111-4111-8111-111111111111", corev1.PodQOSBurstable, nil, nil)
	}
	long := strings.Repeat("a", 254)
	cases := map[string]func(p *corev1.Pod){
		"namespace with a space": func(p *corev1.Pod) { p.Namespace = "a b" },
		"namespace upper case":   func(p *corev1.Pod) { p.Namespace = "Shop" },
		"namespace of 64 bytes":  func(p *corev1.Pod) { p.Namespace = strings.Repeat("n", 64) },
		"name with a hash":       func(p *corev1.Pod) { p.Name = "p#1" },
		"name with a newline":    func(p *corev1.Pod) { p.Name = "p\nkubepods x y batch" },
		"name of 254 bytes":      func(p *corev1.Pod) { p.Name = long },
		"empty name":             func(p *corev1.Pod) { p.Name = "" },
		"uid with a path":        func(p *corev1.Pod) { p.UID = "../../system.slice" },
		"uid upper case":         func(p *corev1.Pod) { p.UID = "01111111-1111-4111-8111-11111111111A" },
		"another node":           func(p *corev1.Pod) { p.Spec.NodeName = "node-b" },
		"no QoS class":           func(p *corev1.Pod) { p.Status.QOSClass = "" },
		"unknown QoS class":      func(p *corev1.Pod) { p.Status.QOSClass = "Platinum" },
		"owner name with a space": func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{*ctrl("apps/v1", "StatefulSet", "d b", "x")}
		},
		"owner kind with a slash":   func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{*ctrl("apps/v1", "a/b", "db", "x")} },
		"owner kind with a newline": func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{*ctrl("apps/v1", "A\nB", "db", "x")} },
	}
	for name, mutate := range cases {
		p := good()
		mutate(p)
		if task, err := MapPod(context.Background(), p, node, nil, EveryNamespace); !errors.Is(err, ErrHostile) {
			t.Errorf("%s: got %+v, %v; want refused", name, task, err)
		}
	}
	if _, err := MapPod(context.Background(), good(), node, nil, EveryNamespace); err != nil {
		t.Fatalf("the good pod: %v", err)
	}
	// a Deployment name read from the ReplicaSet is checked too
	o := owners(rs("ns", "web-1", "11111111-1111-4111-8111-111111111111", ctrl("apps/v1", "Deployment", "web 1 batch", "2")))
	p := good()
	p.OwnerReferences = []metav1.OwnerReference{*ctrl("apps/v1", "ReplicaSet", "web-1", "11111111-1111-4111-8111-111111111111")}
	if task, err := MapPod(context.Background(), p, node, o, EveryNamespace); !errors.Is(err, ErrHostile) {
		t.Errorf("hostile deployment name: got %+v, %v", task, err)
	}
}

// A job name longer than the collector keeps is cut with a hash, so two stay two.
func TestJobNameBounds(t *testing.T) {
	ns := strings.Repeat("n", 63)
	a := jobName(ns, Owner{"statefulset", strings.Repeat("a", 252) + "1"})
	b := jobName(ns, Owner{"statefulset", strings.Repeat("a", 252) + "2"})
	if len(a) != maxField || len(b) != maxField || a == b || !strings.Contains(a, "~") {
		t.Fatalf("long names: %d %q, %d %q", len(a), a, len(b), b)
	}
	if got := jobName("ns", Owner{"deployment", "web"}); got != "ns/deployment/web" {
		t.Fatalf("short name: %q", got)
	}
	exact := jobName("ns", Owner{"pod", strings.Repeat("p", maxField-7)})
	if len(exact) != maxField || strings.Contains(exact, "~") {
		t.Fatalf("a name of exactly %d bytes is kept: %q", maxField, exact)
	}
}

// The kubelet's cgroup layout for both drivers (pkg/kubelet/cm: cgroupfs names pod<uid>, the
// systemd driver escapes '-' in the uid as '_' and nests slices by name).
func TestCgroupPaths(t *testing.T) {
	id := "0a1b2c3d-1111-4111-8111-111111111111"
	esc := "0a1b2c3d_1111_4111_8111_111111111111"
	both := []string{DriverCgroupfs, DriverSystemd}
	cases := []struct {
		qos    corev1.PodQOSClass
		parent string
		want   []string
	}{
		{corev1.PodQOSGuaranteed, "", []string{"kubepods/pod" + id, "kubepods.slice/kubepods-pod" + esc + ".slice"}},
		{corev1.PodQOSBurstable, "", []string{"kubepods/burstable/pod" + id,
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + esc + ".slice"}},
		{corev1.PodQOSBestEffort, "", []string{"kubepods/besteffort/pod" + id,
			"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + esc + ".slice"}},
		{corev1.PodQOSBurstable, "k8s/", []string{"k8s/kubepods/burstable/pod" + id,
			"k8s/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + esc + ".slice"}},
	}
	for _, c := range cases {
		got := CgroupPaths(Task{UID: id, QoS: c.qos}, both, c.parent)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s %q:\n got %q\nwant %q", c.qos, c.parent, got, c.want)
		}
	}
	if got := CgroupPaths(Task{UID: id, QoS: corev1.PodQOSBestEffort}, []string{DriverSystemd}, ""); len(got) != 1 {
		t.Errorf("one driver, one path: %q", got)
	}
}

// The informer keeps only what the mapping reads; the mapping of the kept pod is the same.
func TestKeepMapped(t *testing.T) {
	p := pod("shop", "web-1", "01111111-1111-4111-8111-111111111111", corev1.PodQOSBurstable,
		ctrl("apps/v1", "StatefulSet", "web", "s"), map[string]string{AnnotationProtected: "true", "big": strings.Repeat("x", 1<<20),
			AnnotationScrape: "true", AnnotationPort: "8080", AnnotationWorkCounter: "reqs_total"})
	p.Status.PodIP = "10.9.8.7"
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "i", Env: []corev1.EnvVar{{Name: "E", Value: strings.Repeat("y", 1<<20)}}}}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	k, err := keepMapped(p)
	if err != nil {
		t.Fatal(err)
	}
	kept := k.(*corev1.Pod)
	if kept.Spec.Containers != nil || kept.ManagedFields != nil || len(kept.Annotations) != 4 || kept.ResourceVersion != p.ResourceVersion {
		t.Fatalf("kept %+v", kept)
	}
	a, _ := MapPod(context.Background(), p, node, nil, EveryNamespace)
	b, _ := MapPod(context.Background(), kept, node, nil, EveryNamespace)
	if a.Job != b.Job || a.Class != b.Class || a.Protected != b.Protected || !b.Protected || b.Job != "shop/statefulset/web" ||
		b.Scrape == nil || *a.Scrape != *b.Scrape || b.Scrape.URL != "http://10.9.8.7:8080/metrics" {
		t.Fatalf("%+v != %+v", a, b)
	}
}
