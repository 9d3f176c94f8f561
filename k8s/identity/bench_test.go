package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkSync: one rewrite of the file for max-pods pods of Deployments (owners cached), the
// work done after every burst of pod events.
func BenchmarkSync(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.MaxPods = 2000
	var pods []*corev1.Pod
	var objs []runtime.Object
	for i := 0; i < cfg.MaxPods; i++ {
		rsUID := fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i/10)
		pods = append(pods, pod("shop", fmt.Sprintf("web%d-x%d", i/10, i), fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", i),
			corev1.PodQOSBurstable, ctrl("apps/v1", "ReplicaSet", fmt.Sprintf("web%d-7d9f", i/10), rsUID), nil))
		if i%10 == 0 {
			objs = append(objs, rs("shop", fmt.Sprintf("web%d-7d9f", i/10), rsUID, ctrl("apps/v1", "Deployment", fmt.Sprintf("web%d", i/10), "d")))
		}
	}
	o := owners(objs...)
	o.TTL = time.Hour
	id := New(cfg, nil, o, log.New(io.Discard, "", 0))
	list := func(labels.Selector) ([]*corev1.Pod, error) { return pods, nil }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// a changed pod each round, so that every round writes the file
		pods[0].Annotations = map[string]string{AnnotationProtected: fmt.Sprint(i%2 == 0)}
		if _, err := id.sync(context.Background(), list); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(id.Writes())/float64(b.N), "writes/op")
}
