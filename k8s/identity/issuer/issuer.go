// Package issuer answers an agent pod its node's own credentials: the node's host key
// (HMAC-SHA256 of the master, python/cpi2/hostauth.py) as the Kafka client file's cpi2.host,
// cpi2.host.key and cpi2.host.key.id lines. The agent proves which node it runs on with a
// projected service-account token bound to its pod (audience Audience): a TokenReview says the
// token is valid, for this audience, and names the pod and the node it is bound to; the pod must
// still exist with that UID, run on that node, in Namespace, and carry the agents' labels. The
// master never leaves the issuer.
package issuer

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"slices"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// The keys the API server puts in a pod-bound token's review (k8s.io/apiserver serviceaccount).
const (
	ExtraPodName  = "authentication.kubernetes.io/pod-name"
	ExtraPodUID   = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName = "authentication.kubernetes.io/node-name"
	// MaxToken bounds the bearer token read from a request (a projected token is about 1 KiB).
	MaxToken = 16 << 10
)

var keyLabel = []byte("cpi2 host key v1\x00")

// HostKey is the host's own key, derived from the master (hostauth.py's host_key).
func HostKey(master []byte, host string) []byte {
	m := hmac.New(sha256.New, master)
	m.Write(keyLabel)
	m.Write([]byte(host))
	return m.Sum(nil)
}

// Issuer serves POST /v1/credentials.
type Issuer struct {
	Client    kubernetes.Interface
	Master    []byte
	KeyID     string
	Audience  string
	Namespace string
	Agents    labels.Selector // the labels of the chart's agent pods
	Log       *log.Logger
	Timeout   time.Duration // of the API calls of one request
}

// refusal is a request refused, with the status and the reason the client is told.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

func refuse(status int, format string, a ...any) error {
	return &refusal{status, fmt.Sprintf(format, a...)}
}

// Credentials checks token and answers the client file lines of the node its pod runs on.
func (is *Issuer) Credentials(ctx context.Context, token string) (node string, lines string, err error) {
	if token == "" {
		return "", "", refuse(http.StatusUnauthorized, "no bearer token")
	}
	if len(token) > MaxToken {
		return "", "", refuse(http.StatusUnauthorized, "token longer than %d bytes", MaxToken)
	}
	tr, err := is.Client.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{is.Audience}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", "", refuse(http.StatusServiceUnavailable, "token review: %v", err)
	}
	st := tr.Status
	if !st.Authenticated {
		return "", "", refuse(http.StatusUnauthorized, "token not valid for audience %q: %s", is.Audience, st.Error)
	}
	if !slices.Contains(st.Audiences, is.Audience) {
		return "", "", refuse(http.StatusUnauthorized, "token not for audience %q", is.Audience)
	}
	one := func(k string) string {
		if v := st.User.Extra[k]; len(v) == 1 {
			return v[0]
		}
		return ""
	}
	podName, podUID, node := one(ExtraPodName), one(ExtraPodUID), one(ExtraNodeName)
	if podName == "" || podUID == "" {
		return "", "", refuse(http.StatusForbidden, "token of %s is not bound to a pod", st.User.Username)
	}
	if node == "" {
		return "", "", refuse(http.StatusForbidden, "token of pod %s names no node", podName)
	}
	ns, ok := strings.CutPrefix(st.User.Username, "system:serviceaccount:")
	if ns, _, ok = strings.Cut(ns, ":"); !ok || ns != is.Namespace {
		return "", "", refuse(http.StatusForbidden, "%s is not a service account of namespace %q", st.User.Username, is.Namespace)
	}
	pod, err := is.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", "", refuse(http.StatusForbidden, "pod %s/%s is gone", ns, podName)
	}
	if err != nil {
		return "", "", refuse(http.StatusServiceUnavailable, "pod %s/%s: %v", ns, podName, err)
	}
	switch {
	case string(pod.UID) != podUID:
		return "", "", refuse(http.StatusForbidden, "pod %s/%s is not the one of the token (uid %s, not %s)", ns, podName, pod.UID, podUID)
	case pod.Spec.NodeName != node:
		return "", "", refuse(http.StatusForbidden, "pod %s/%s runs on %q, the token names %q", ns, podName, pod.Spec.NodeName, node)
	case !is.Agents.Matches(labels.Set(pod.Labels)):
		return "", "", refuse(http.StatusForbidden, "pod %s/%s is not an agent (labels %s)", ns, podName, is.Agents)
	case pod.DeletionTimestamp != nil:
		return "", "", refuse(http.StatusForbidden, "pod %s/%s is being deleted", ns, podName)
	}
	return node, fmt.Sprintf("cpi2.host=%s\ncpi2.host.key=%s\ncpi2.host.key.id=%s\n",
		node, hex.EncodeToString(HostKey(is.Master, node)), is.KeyID), nil
}

// ServeHTTP: POST /v1/credentials with "Authorization: Bearer TOKEN" and no body; 200 with the
// client file lines, or an error status with a one-line reason.
func (is *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/credentials" {
		http.Error(w, "not found: POST /v1/credentials", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 1)); n > 0 {
		http.Error(w, "a request has no body", http.StatusBadRequest)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	ctx, cancel := context.WithTimeout(r.Context(), is.Timeout)
	defer cancel()
	node, lines, err := is.Credentials(ctx, strings.TrimSpace(token))
	if err != nil {
		status := http.StatusInternalServerError
		if rf, ok := err.(*refusal); ok {
			status = rf.status
		}
		is.Log.Printf("refused %s: %v", r.RemoteAddr, err)
		http.Error(w, err.Error(), status)
		return
	}
	is.Log.Printf("issued the credentials of node %s to %s", node, r.RemoteAddr)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, lines)
}
