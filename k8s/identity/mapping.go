package main

// mapping: one pod of this node to one task of the collector's labels file. Every field read
// from an API object is checked (length, characters) before it reaches the file: a pod is
// mapped whole or not at all.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The collector's task classes, as its labels file spells them (collectors/collector/src/rules.c).
const (
	ClassLatencySensitive = "latency_sensitive"
	ClassBatch            = "batch"
	ClassBestEffort       = "best_effort"
)

// Annotations a pod may carry.
const (
	AnnotationClass     = "cpi2.io/task-class" // latency_sensitive, batch or best_effort: overrides the QoS class
	AnnotationProtected = "cpi2.io/protected"  // "true": the task is eligible for protection whatever its class
)

// maxField is the longest job or task_id the collector keeps (struct mapping: char[256]).
const maxField = 255

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)        // namespaces
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)      // object names
	kindName     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,62}$`)                 // owner kinds
	podUID       = regexp.MustCompile(`^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$`) // metadata.uid
	cgroupParent = regexp.MustCompile(`^([A-Za-z0-9._-]+/)*$`)                       // --cgroup-parent
)

// Task is one pod as the collector sees it.
type Task struct {
	UID       string
	Namespace string
	Pod       string
	Job       string // namespace/kind/name of the owning workload
	Class     string
	Protected bool
	QoS       corev1.PodQOSClass
	Scrape    *Scrape  // its metrics endpoint (scrape.go), or nil
	Notes     []string // what the mapping overrode or ignored, for the log
}

// Owner is a pod's workload: the kind and name its job is named after.
type Owner struct {
	Kind string // lower case: deployment, statefulset, daemonset, job, cronjob, replicaset, pod, ...
	Name string
}

// OwnerResolver follows a controller reference one step up (ReplicaSet to Deployment, Job to
// CronJob). It returns ok=false when the referenced object is gone, and an error when the
// API could not answer.
type OwnerResolver interface {
	Parent(ctx context.Context, namespace string, ref metav1.OwnerReference) (parent *metav1.OwnerReference, err error)
}

// ErrHostile marks a pod whose fields cannot be written to the labels file.
var ErrHostile = errors.New("refused")

func hostile(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrHostile, fmt.Sprintf(format, a...))
}

// quote shows an untrusted value in a log line: Go-quoted and cut to 80 bytes.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

// AnnotationPolicy says in which namespaces a pod's own class and protection annotations
// (AnnotationClass, AnnotationProtected) are honoured: a pod that names itself latency-sensitive
// and protected is exempt from caps and its slowdowns cap its neighbours, so only the
// namespaces the operator lists may (--annotation-namespaces; "*": every one).
type AnnotationPolicy struct {
	All        bool
	Namespaces map[string]bool
}

// Honours is whether the annotations of a pod of namespace ns are honoured.
func (a AnnotationPolicy) Honours(ns string) bool { return a.All || a.Namespaces[ns] }

// EveryNamespace honours the annotations of every pod.
var EveryNamespace = AnnotationPolicy{All: true}

// MapPod maps a pod of node to its task, honouring its class and protection annotations where
// policy says. The error is ErrHostile (never mappable as it is) or one from the resolver
// (worth another try).
func MapPod(ctx context.Context, pod *corev1.Pod, node string, owners OwnerResolver, policy AnnotationPolicy) (Task, error) {
	t := Task{UID: string(pod.UID), Namespace: pod.Namespace, Pod: pod.Name, QoS: pod.Status.QOSClass}

	if !dnsLabel.MatchString(pod.Namespace) {
		return t, hostile("namespace %s", quote(pod.Namespace))
	}
	if !dnsSubdomain.MatchString(pod.Name) {
		return t, hostile("pod name %s", quote(pod.Name))
	}
	if !podUID.MatchString(t.UID) {
		return t, hostile("pod uid %s", quote(t.UID))
	}
	if pod.Spec.NodeName != node {
		return t, hostile("pod on node %s, not %s", quote(pod.Spec.NodeName), node)
	}
	qosClass, ok := map[corev1.PodQOSClass]string{
		corev1.PodQOSGuaranteed: ClassLatencySensitive,
		corev1.PodQOSBurstable:  ClassBatch,
		corev1.PodQOSBestEffort: ClassBestEffort,
	}[t.QoS]
	if !ok {
		return t, hostile("QoS class %s", quote(string(t.QoS)))
	}
	t.Class = qosClass
	if !policy.Honours(pod.Namespace) {
		for _, k := range []string{AnnotationClass, AnnotationProtected} {
			if v, ok := pod.Annotations[k]; ok {
				t.Notes = append(t.Notes, fmt.Sprintf("%s=%s ignored: namespace %s may not choose its class or protection (--annotation-namespaces)",
					k, quote(v), pod.Namespace))
			}
		}
	} else if v, ok := pod.Annotations[AnnotationClass]; ok {
		if c, err := parseClass(v); err == nil {
			t.Class = c
		} else {
			t.Notes = append(t.Notes, fmt.Sprintf("%s=%s ignored (%v): class %s from QoS %s",
				AnnotationClass, quote(v), err, qosClass, t.QoS))
		}
	}
	if v, ok := pod.Annotations[AnnotationProtected]; ok && policy.Honours(pod.Namespace) {
		if b, err := strconv.ParseBool(v); err == nil {
			t.Protected = b
		} else {
			t.Notes = append(t.Notes, fmt.Sprintf("%s=%s ignored (not true or false)", AnnotationProtected, quote(v)))
		}
	}
	var note string
	if t.Scrape, note = scrapeOf(pod); note != "" {
		t.Notes = append(t.Notes, note)
	}
	owner, err := workload(ctx, pod, owners)
	if err != nil {
		return t, err
	}
	t.Job = jobName(pod.Namespace, owner)
	return t, nil
}

// parseClass accepts the collector's class names, with '-' for '_'.
func parseClass(v string) (string, error) {
	switch strings.ReplaceAll(strings.ToLower(v), "-", "_") {
	case ClassLatencySensitive:
		return ClassLatencySensitive, nil
	case ClassBatch:
		return ClassBatch, nil
	case ClassBestEffort:
		return ClassBestEffort, nil
	}
	return "", errors.New("not latency_sensitive, batch or best_effort")
}

func checkRef(ref *metav1.OwnerReference) error {
	if !kindName.MatchString(ref.Kind) {
		return hostile("owner kind %s", quote(ref.Kind))
	}
	if !dnsSubdomain.MatchString(ref.Name) {
		return hostile("owner name %s", quote(ref.Name))
	}
	return nil
}

// workload: the pod's controller, one step further for a ReplicaSet (its Deployment) and a
// Job (its CronJob); a pod without a controller is its own workload.
func workload(ctx context.Context, pod *corev1.Pod, owners OwnerResolver) (Owner, error) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return Owner{"pod", pod.Name}, nil
	}
	if err := checkRef(ref); err != nil {
		return Owner{}, err
	}
	grand := map[string]string{"apps/ReplicaSet": "Deployment", "batch/Job": "CronJob"}
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if want, ok := grand[group+"/"+ref.Kind]; ok && owners != nil {
		parent, err := owners.Parent(ctx, pod.Namespace, *ref)
		if err != nil {
			return Owner{}, err
		}
		if parent != nil && parent.Kind == want {
			if err := checkRef(parent); err != nil {
				return Owner{}, err
			}
			ref = parent
		}
	}
	return Owner{strings.ToLower(ref.Kind), ref.Name}, nil
}

// jobName is namespace/kind/name, cut to what the collector keeps: a longer one keeps its
// first bytes and ends with '~' and 16 hex digits of its SHA-256, so that two long names stay
// two jobs.
func jobName(namespace string, o Owner) string {
	job := namespace + "/" + o.Kind + "/" + o.Name
	if len(job) <= maxField {
		return job
	}
	sum := sha256.Sum256([]byte(job))
	return job[:maxField-17] + "~" + hex.EncodeToString(sum[:8])
}

// Cgroup drivers of the kubelet.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// CgroupPaths are the pod's cgroup, relative to the collector's root, for each driver asked
// for: the layout the kubelet makes with --cgroups-per-qos (its default), below parent (the
// kubelet's --cgroup-root, "" for the default "/").
func CgroupPaths(t Task, drivers []string, parent string) []string {
	var paths []string
	tier := map[corev1.PodQOSClass]string{corev1.PodQOSBurstable: "burstable", corev1.PodQOSBestEffort: "besteffort"}[t.QoS]
	for _, d := range drivers {
		switch d {
		case DriverCgroupfs:
			if tier == "" {
				paths = append(paths, parent+"kubepods/pod"+t.UID)
			} else {
				paths = append(paths, parent+"kubepods/"+tier+"/pod"+t.UID)
			}
		case DriverSystemd:
			uid := strings.ReplaceAll(t.UID, "-", "_")
			if tier == "" {
				paths = append(paths, parent+"kubepods.slice/kubepods-pod"+uid+".slice")
			} else {
				paths = append(paths, parent+"kubepods.slice/kubepods-"+tier+".slice/kubepods-"+tier+"-pod"+uid+".slice")
			}
		}
	}
	return paths
}
