package main

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pod's endpoint from its annotations: the pod's own IP, never an annotation's; hostile or
// unusable values leave the pod mapped and unscraped, with a note that says why.
func TestScrapeOf(t *testing.T) {
	base := map[string]string{AnnotationScrape: "true", AnnotationPort: "9121",
		AnnotationWorkCounter: "redis_commands_processed_total"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		name    string
		ann     map[string]string
		ip      string
		host    bool
		options string // "" with note: refused; "" without: not asked for
		note    string
	}{
		{"plain", with(), "10.1.2.3", false, " scrape=http://10.1.2.3:9121/metrics work=redis_commands_processed_total", ""},
		{"ipv6 and a path", with(AnnotationPath, "/stats/prom", AnnotationLatencyMetric, `lat{cmd="get"}`, AnnotationLatencyQuantile, "0.99", AnnotationWorkCounter, "-"),
			"fd00::1:2", false, ` scrape=http://[fd00::1:2]:9121/stats/prom latency=lat{cmd="get"} latency_quantile=0.99`, ""},
		{"quoted blanks and '#' in a selector", with(AnnotationWorkCounter, `reqs_total{path="/a b #c",code=~"2.."}`), "10.0.0.1", false,
			` scrape=http://10.0.0.1:9121/metrics work=reqs_total{path="/a b #c",code=~"2.."}`, ""},
		{"escaped quote inside", with(AnnotationWorkCounter, `reqs_total{path="a\" b"}`), "10.0.0.1", false,
			` scrape=http://10.0.0.1:9121/metrics work=reqs_total{path="a\" b"}`, ""},
		{"not asked for", map[string]string{}, "10.0.0.1", false, "", ""},
		{"Prometheus scrapes it, nothing for CPI²", with(AnnotationWorkCounter, "-"), "10.0.0.1", false, "", ""},
		{"scrape false", with(AnnotationScrape, "false"), "10.0.0.1", false, "", ""},
		{"host network", with(), "10.0.0.1", true, "", "host's network"},
		{"https", with(AnnotationScheme, "https"), "10.0.0.1", false, "", "http only"},
		{"no port", with(AnnotationPort, "-"), "10.0.0.1", false, "", "not a port"},
		{"port 0", with(AnnotationPort, "0"), "10.0.0.1", false, "", "not a port"},
		{"port name", with(AnnotationPort, "metrics"), "10.0.0.1", false, "", "not a port"},
		{"no pod IP", with(), "", false, "", "no pod IP"},
		{"a name for an IP", with(), "redis.local", false, "", "no pod IP"},
		{"path without /", with(AnnotationPath, "metrics"), "10.0.0.1", false, "", "not a path"},
		{"path with a blank", with(AnnotationPath, "/a b"), "10.0.0.1", false, "", "not a path"},
		{"path with a newline", with(AnnotationPath, "/a\nHost: x"), "10.0.0.1", false, "", "not a path"},
		{"path with a quote", with(AnnotationPath, `/a"`), "10.0.0.1", false, "", "not a path"},
		{"work with a blank", with(AnnotationWorkCounter, "reqs_total x"), "10.0.0.1", false, "", "outside double quotes"},
		{"work with '#'", with(AnnotationWorkCounter, "reqs#x"), "10.0.0.1", false, "", "outside double quotes"},
		{"work with a quote open", with(AnnotationWorkCounter, `reqs{a="b}`), "10.0.0.1", false, "", "left open"},
		{"work with a newline", with(AnnotationWorkCounter, "reqs\nkubepods/x j i batch"), "10.0.0.1", false, "", "printable"},
		{"work not ASCII", with(AnnotationWorkCounter, "reqs{a=\"é\"}"), "10.0.0.1", false, "", "printable"},
		{"work too long", with(AnnotationWorkCounter, strings.Repeat("a", 600)), "10.0.0.1", false, "", "longer"},
		{"quantile without latency", with(AnnotationLatencyQuantile, "0.5"), "10.0.0.1", false, "", "latency-quantile"},
		{"quantile 2", with(AnnotationLatencyMetric, "h", AnnotationLatencyQuantile, "2"), "10.0.0.1", false, "", "latency-quantile"},
		{"quantile NaN", with(AnnotationLatencyMetric, "h", AnnotationLatencyQuantile, "NaN"), "10.0.0.1", false, "", "latency-quantile"},
	} {
		p := pod("shop", "cache-0", uidWeb, corev1.PodQOSBurstable, nil, c.ann)
		p.Status.PodIP = c.ip
		p.Spec.HostNetwork = c.host
		task, err := MapPod(context.Background(), p, node, nil, EveryNamespace)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ""
		if task.Scrape != nil {
			got = task.Scrape.Options()
		}
		notes := strings.Join(task.Notes, "; ")
		if got != c.options || (c.note == "") != (notes == "") || !strings.Contains(notes, c.note) {
			t.Errorf("%s: options %q notes %q, want %q and a note with %q", c.name, got, notes, c.options, c.note)
		}
		// whatever the annotations, the line is one the collector reads
		data, _ := Render([]Line{{"kubepods/pod1", task}}, "t")
		if m := parseLabels(t, string(data)); len(m) != 1 || m["kubepods/pod1"][0] != "shop/pod/cache-0" {
			t.Errorf("%s: the line reads as %q", c.name, m)
		}
	}
}
