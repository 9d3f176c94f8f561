package main

// scrape: a pod's metrics endpoint, for the collector's service signals (cpu_per_op, latency:
// collectors/README.md, "Service signals"). The usual Prometheus annotations say where the
// endpoint is; the project's say what the collector reads from it:
//
//	prometheus.io/scrape: "true"          required
//	prometheus.io/port: "9121"            required (the pod's port)
//	prometheus.io/path: "/metrics"        optional, /metrics by default
//	cpi2.io/work-counter: 'redis_commands_total{cmd=~"get|set"}'     a PromQL selector
//	cpi2.io/latency-metric: 'redis_latency_percentiles_usec{cmd="get"}'  a histogram's or
//	                                      summary's family (at least one of the two)
//	cpi2.io/latency-quantile: "0.99"      optional: a quantile rather than the mean
//
// The address is always the pod's own IP from its status, never an annotation, and a pod on the
// host's network is not scraped: the collector runs as root on the node, and a pod must not be
// able to point it at the node's own services. Each value is checked to keep the labels file's
// syntax (printable ASCII, no blank or '#' outside a selector's double quotes, quotes closed);
// the selectors themselves are parsed by the collector, which keeps the pod's mapping and
// leaves it unscraped, with a log line, when one does not parse.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Annotations that name a pod's metrics endpoint.
const (
	AnnotationScrape          = "prometheus.io/scrape"
	AnnotationPort            = "prometheus.io/port"
	AnnotationPath            = "prometheus.io/path"
	AnnotationScheme          = "prometheus.io/scheme"
	AnnotationWorkCounter     = "cpi2.io/work-counter"
	AnnotationLatencyMetric   = "cpi2.io/latency-metric"
	AnnotationLatencyQuantile = "cpi2.io/latency-quantile"
)

// scrapeAnnotations are the annotations the informer's store keeps for this file.
var scrapeAnnotations = []string{AnnotationScrape, AnnotationPort, AnnotationPath, AnnotationScheme,
	AnnotationWorkCounter, AnnotationLatencyMetric, AnnotationLatencyQuantile}

// maxSelector is the longest selector or path written (the collector reads lines of any length;
// this keeps a hostile pod from growing the file).
const maxSelector = 512

// Scrape is what the labels file says of a pod's endpoint.
type Scrape struct {
	URL      string
	Work     string
	Latency  string
	Quantile string
}

// Options renders the labels file's options: scrape=URL work=.. latency=.. latency_quantile=..
func (s *Scrape) Options() string {
	out := " scrape=" + s.URL
	if s.Work != "" {
		out += " work=" + s.Work
	}
	if s.Latency != "" {
		out += " latency=" + s.Latency
	}
	if s.Quantile != "" {
		out += " latency_quantile=" + s.Quantile
	}
	return out
}

// token checks that v stays one token of the labels file as the collector splits it: printable
// ASCII, blanks and '#' only inside double quotes (a backslash keeps the next character inside
// them), the quotes closed.
func token(v string) error {
	if v == "" || len(v) > maxSelector {
		return fmt.Errorf("empty or longer than %d bytes", maxSelector)
	}
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < 0x20 || c > 0x7e:
			return fmt.Errorf("a byte that is not printable ASCII")
		case quoted && c == '\\' && i+1 < len(v):
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ' ' || c == '#'):
			return fmt.Errorf("a blank or '#' outside double quotes")
		}
	}
	if quoted {
		return fmt.Errorf("a double quote left open")
	}
	return nil
}

// scrapeOf reads a pod's endpoint from its annotations: nil when the pod asks for none, and a
// note when it asks and cannot have one.
func scrapeOf(pod *corev1.Pod) (*Scrape, string) {
	a := pod.Annotations
	work, latency := a[AnnotationWorkCounter], a[AnnotationLatencyMetric]
	if a[AnnotationScrape] != "true" || (work == "" && latency == "") {
		return nil, "" // not asked for (a pod Prometheus scrapes is not necessarily one to measure)
	}
	refuse := func(format string, args ...any) (*Scrape, string) {
		return nil, "not scraped: " + fmt.Sprintf(format, args...)
	}
	if pod.Spec.HostNetwork {
		return refuse("a pod on the host's network (its address is the node's)")
	}
	if s, ok := a[AnnotationScheme]; ok && s != "http" {
		return refuse("%s=%s (the collector scrapes http only)", AnnotationScheme, quote(s))
	}
	port, err := strconv.Atoi(a[AnnotationPort])
	if err != nil || port < 1 || port > 65535 {
		return refuse("%s=%s is not a port", AnnotationPort, quote(a[AnnotationPort]))
	}
	ip, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil || ip.Zone() != "" {
		return refuse("no pod IP yet (%s)", quote(pod.Status.PodIP))
	}
	path := "/metrics"
	if p, ok := a[AnnotationPath]; ok {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\"\\") || token(p) != nil {
			return refuse("%s=%s is not a path without blanks, quotes or '#'", AnnotationPath, quote(p))
		}
		path = p
	}
	s := &Scrape{URL: "http://" + netip.AddrPortFrom(ip.Unmap(), uint16(port)).String() + path}
	for _, f := range []struct {
		name string
		val  string
		dst  *string
	}{{AnnotationWorkCounter, work, &s.Work}, {AnnotationLatencyMetric, latency, &s.Latency}} {
		if f.val == "" {
			continue
		}
		if err := token(f.val); err != nil {
			return refuse("%s=%s: %v", f.name, quote(f.val), err)
		}
		*f.dst = f.val
	}
	if q, ok := a[AnnotationLatencyQuantile]; ok {
		v, err := strconv.ParseFloat(q, 64)
		if err != nil || !(v >= 0 && v <= 1) || latency == "" || token(q) != nil {
			return refuse("%s=%s is not a number in [0, 1] beside %s", AnnotationLatencyQuantile, quote(q), AnnotationLatencyMetric)
		}
		s.Quantile = q
	}
	return s, ""
}
