package main

// owners: a ReplicaSet's Deployment and a Job's CronJob, read with a get (no cluster-wide
// watch: a node needs only the owners of its own pods) and kept for a while by the owner's uid.

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

type ownerEntry struct {
	parent  *metav1.OwnerReference
	expires time.Time
}

// APIOwners resolves owners through the API, with a bounded cache.
type APIOwners struct {
	Client  kubernetes.Interface
	TTL     time.Duration // how long an answer is kept
	MaxSize int           // entries kept at most
	Now     func() time.Time

	mu    sync.Mutex
	cache map[types.UID]ownerEntry
	gets  int
}

// Gets is how many objects the resolver has read from the API.
func (o *APIOwners) Gets() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gets
}

// Parent returns the controller of the object ref names, nil if it has none or is gone (or
// the object of that name is another one, with another uid).
func (o *APIOwners) Parent(ctx context.Context, namespace string, ref metav1.OwnerReference) (*metav1.OwnerReference, error) {
	now := o.Now()
	o.mu.Lock()
	if e, ok := o.cache[ref.UID]; ok && now.Before(e.expires) {
		o.mu.Unlock()
		return e.parent, nil
	}
	o.gets++
	o.mu.Unlock()

	var meta *metav1.ObjectMeta
	var err error
	switch ref.Kind {
	case "ReplicaSet":
		rs, e := o.Client.AppsV1().ReplicaSets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if e == nil {
			meta = &rs.ObjectMeta
		}
		err = e
	case "Job":
		job, e := o.Client.BatchV1().Jobs(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if e == nil {
			meta = &job.ObjectMeta
		}
		err = e
	default:
		return nil, nil
	}
	var parent *metav1.OwnerReference
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	case meta.UID != ref.UID:
	default:
		if p := metav1.GetControllerOfNoCopy(meta); p != nil {
			c := *p
			parent = &c
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cache == nil {
		o.cache = map[types.UID]ownerEntry{}
	}
	if len(o.cache) >= o.MaxSize {
		for k, e := range o.cache {
			if !now.Before(e.expires) || len(o.cache) >= o.MaxSize {
				delete(o.cache, k)
			}
		}
	}
	o.cache[ref.UID] = ownerEntry{parent, now.Add(o.TTL)}
	return parent, nil
}
