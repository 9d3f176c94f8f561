package main

// identity: watches the pods of one node (an informer: list, then watch, with the field
// selector spec.nodeName=NODE) and rewrites the labels file whenever the mapping changes.
// The informer's store outlives a lost connection, and a pod whose owner cannot be read keeps
// the job it had, so while the API server is away the file keeps the last good mapping.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config is what the identity component needs to run (see main.go for the options).
type Config struct {
	Node         string
	LabelsFile   string
	Drivers      []string
	CgroupParent string
	Namespaces   map[string]bool // opted-in namespaces; empty: every namespace
	// EnforceFile, if set, is written with the cgroups incidents may cap: those of the pods of
	// EnforceNamespaces (none: no pod), protected pods never (the enforcer's enforce_file)
	EnforceFile       string
	EnforceNamespaces map[string]bool
	// Annotations: where pods may choose their class and protection (none: nowhere)
	Annotations AnnotationPolicy
	Debounce    time.Duration
	Retry       time.Duration
	Resync      time.Duration // sync this often without events too (/healthz sees the loop go on)
	MaxPods     int
}

// Identity is one running identity component.
type Identity struct {
	cfg    Config
	client kubernetes.Interface
	owners OwnerResolver
	log    *log.Logger

	last     map[string]Task   // by pod uid: the mapping in the file
	reported map[string]string // by pod uid: the last refusal or note logged
	writes   atomic.Int64
	synced   atomic.Bool
	// for /metrics and /healthz
	syncs, syncErrors, mapped, unmapped atomic.Int64
	alive                               atomic.Int64 // unix ns of the last good sync (or the start)
}

// New makes an identity component; owners resolves ReplicaSets and Jobs.
func New(cfg Config, client kubernetes.Interface, owners OwnerResolver, logger *log.Logger) *Identity {
	id := &Identity{cfg: cfg, client: client, owners: owners, log: logger,
		last: map[string]Task{}, reported: map[string]string{}}
	id.alive.Store(time.Now().UnixNano())
	return id
}

// Writes is how many times the labels file was replaced.
func (id *Identity) Writes() int64 { return id.writes.Load() }

// NodeSelector is the field selector of the watch.
func NodeSelector(node string) string {
	return fields.OneTermEqualSelector("spec.nodeName", node).String()
}

// Run watches until ctx ends; once (after the first write) it returns after the first sync.
func (id *Identity) Run(ctx context.Context, once bool) error {
	factory := informers.NewSharedInformerFactoryWithOptions(id.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = NodeSelector(id.cfg.Node) }))
	pods := factory.Core().V1().Pods()
	informer := pods.Informer()
	if err := informer.SetTransform(keepMapped); err != nil {
		return err
	}
	dirty := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, n any) { poke(n) },
		DeleteFunc: poke,
	}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown() // waits for the informer, which stops at cancel (deferred after)
	defer cancel()
	factory.Start(ctx.Done())
	id.log.Printf("identity: watching the pods of node %s (field selector %s); labels file %s",
		id.cfg.Node, NodeSelector(id.cfg.Node), id.cfg.LabelsFile)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		id.log.Printf("identity: stopped before the first list of pods; %s left as it was", id.cfg.LabelsFile)
		return nil
	}
	id.synced.Store(true)
	retry := time.NewTimer(time.Hour) // armed only while a pod waits for its owner
	retry.Stop()
	defer retry.Stop()
	var resync <-chan time.Time
	if id.cfg.Resync > 0 {
		t := time.NewTicker(id.cfg.Resync)
		defer t.Stop()
		resync = t.C
	}
	for {
		pending, err := id.sync(ctx, pods.Lister().List)
		if err != nil {
			id.syncErrors.Add(1)
			id.log.Printf("identity: write %s: %v (the collector keeps the file it has)", id.cfg.LabelsFile, err)
			pending = true
		} else {
			id.syncs.Add(1)
			id.alive.Store(time.Now().UnixNano())
		}
		if once {
			if pending {
				return errors.New("some pods could not be mapped (see above)")
			}
			return nil
		}
		if pending {
			retry.Reset(id.cfg.Retry)
		}
		select {
		case <-ctx.Done():
			id.log.Printf("identity: stopping; %s keeps the last mapping", id.cfg.LabelsFile)
			return nil
		case <-dirty:
		case <-retry.C:
		case <-resync:
		}
		// let a burst of events (a rollout, a node drain) settle into one write
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(id.cfg.Debounce):
		}
		select {
		case <-dirty:
		default:
		}
	}
}

// keepMapped is the informer's transform: the store keeps of each pod only what the mapping
// reads (and only this component's annotations), so a pod's size on the API server (its
// containers, environment, managed fields) does not become this agent's memory.
func keepMapped(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	kept := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
			ResourceVersion: pod.ResourceVersion, OwnerReferences: pod.OwnerReferences},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName, HostNetwork: pod.Spec.HostNetwork},
		Status: corev1.PodStatus{QOSClass: pod.Status.QOSClass, Phase: pod.Status.Phase, PodIP: pod.Status.PodIP},
	}
	for _, k := range append([]string{AnnotationClass, AnnotationProtected}, scrapeAnnotations...) {
		if v, ok := pod.Annotations[k]; ok {
			if kept.Annotations == nil {
				kept.Annotations = map[string]string{}
			}
			kept.Annotations[k] = v
		}
	}
	return kept, nil
}

// report logs msg for a pod once, until it changes.
func (id *Identity) report(uid, msg string) {
	if id.reported[uid] == msg {
		return
	}
	id.reported[uid] = msg
	id.log.Print(msg)
}

// sync maps every pod of the store and writes the file if it changed; pending says that some
// pod is worth another try (its owner could not be read).
func (id *Identity) sync(ctx context.Context, list func(labels.Selector) ([]*corev1.Pod, error)) (pending bool, err error) {
	pods, err := list(labels.Everything())
	if err != nil {
		return true, err
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].UID < pods[j].UID })
	if len(pods) > id.cfg.MaxPods {
		id.report("max-pods", fmt.Sprintf("identity: %d pods on node %s, more than max_pods=%d: only the first %d (by uid) are mapped",
			len(pods), id.cfg.Node, id.cfg.MaxPods, id.cfg.MaxPods))
		pods = pods[:id.cfg.MaxPods]
	}
	next := map[string]Task{}
	seen := map[string]bool{"max-pods": true}
	unmapped := int64(0)
	defer func() {
		if err == nil {
			id.mapped.Store(int64(len(next)))
			id.unmapped.Store(unmapped)
		}
	}()
	for _, pod := range pods {
		uid := string(pod.UID)
		seen[uid] = true
		if len(id.cfg.Namespaces) > 0 && !id.cfg.Namespaces[pod.Namespace] {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue // its containers are gone, and so is its cgroup
		}
		t, err := MapPod(ctx, pod, id.cfg.Node, id.owners, id.cfg.Annotations)
		where := fmt.Sprintf("pod %s/%s (uid %s)", quote(pod.Namespace), quote(pod.Name), quote(uid))
		switch {
		case errors.Is(err, ErrHostile):
			id.report(uid, fmt.Sprintf("identity: %s not mapped: %v", where, err))
			unmapped++
			continue
		case err != nil:
			pending = true
			prev, ok := id.last[uid]
			if !ok {
				id.report(uid, fmt.Sprintf("identity: %s not mapped yet: its owner could not be read: %v", where, err))
				unmapped++
				continue
			}
			id.report(uid, fmt.Sprintf("identity: %s keeps job %s: its owner could not be read: %v", where, prev.Job, err))
			t.Job = prev.Job
		default:
			msg := fmt.Sprintf("identity: %s is task %s of job %s, class %s", where, t.Pod, t.Job, t.Class)
			if t.Protected {
				msg += ", protected"
			}
			for _, n := range t.Notes {
				msg += "; " + n
			}
			id.report(uid, msg)
		}
		next[uid] = t
	}
	for uid := range id.reported {
		if !seen[uid] {
			delete(id.reported, uid)
		}
	}
	var lines []Line
	for _, t := range next {
		for _, p := range CgroupPaths(t, id.cfg.Drivers, id.cfg.CgroupParent) {
			lines = append(lines, Line{p, t})
		}
	}
	data, dropped := Render(lines, fmt.Sprintf("cpi2-k8s-identity: the pods of node %s; replaced whole, do not edit", id.cfg.Node))
	for _, p := range dropped {
		id.log.Printf("identity: cgroup %s claimed by two pods: left out", p)
	}
	wrote, err := WriteAtomic(id.cfg.LabelsFile, data)
	if err != nil {
		return true, err
	}
	if wrote {
		id.writes.Add(1)
		id.log.Printf("identity: wrote %s: %d pods, %d lines", id.cfg.LabelsFile, len(next), bytes.Count(data, []byte("\n"))-2)
	}
	if id.cfg.EnforceFile != "" {
		data, n := RenderEnforce(lines, dropped, id.cfg.EnforceNamespaces,
			fmt.Sprintf("cpi2-k8s-identity: the cgroups of node %s that incidents may cap (namespaces %s); replaced whole, do not edit",
				id.cfg.Node, strings.Join(sortedKeys(id.cfg.EnforceNamespaces), ", ")))
		wrote, err := WriteAtomic(id.cfg.EnforceFile, data)
		if err != nil {
			return true, err
		}
		if wrote {
			id.log.Printf("identity: wrote %s: %d cgroups may be capped", id.cfg.EnforceFile, n)
		}
	}
	id.last = next
	return pending, nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		keys = append(keys, "none")
	}
	return keys
}
