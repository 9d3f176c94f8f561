package chart

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// Each agent serves /metrics and /healthz on its own port: the flag it is given, the container
// port, the probes, the headless Service's port and (when enabled) the ServiceMonitor's endpoint
// all name the same one; the log format reaches the three.
func TestAgentsMetricsAndProbes(t *testing.T) {
	docs := render(t, "--set", "agents.logFormat=json", "--set", "agents.metrics.enforcerPort=19402")
	want := map[string]int{"collector": 9401, "enforcer": 19402, "identity": 9403}
	svc := find(docs, "Service", "t-agents-metrics")
	if get(svc, "spec", "clusterIP") != "None" {
		t.Errorf("the agents' metrics Service is not headless: %v", get(svc, "spec"))
	}
	ds := find(docs, "DaemonSet", "t-agents")
	for k, v := range get(svc, "spec", "selector").(obj) {
		if get(ds, "spec", "template", "metadata", "labels", k) != v {
			t.Errorf("the Service selects %s=%v, the agents' pods do not have it", k, v)
		}
	}
	for name, port := range want {
		c := container(t, docs, name)
		pname := "m-" + name
		if !has(strs(c["args"]), fmt.Sprintf("--metrics-address=:%d", port)) || !has(strs(c["args"]), "--log-format=json") {
			t.Errorf("%s: args %v", name, c["args"])
		}
		if get(c, "ports", 0, "name") != pname || num(fmt.Sprint(get(c, "ports", 0, "containerPort"))) != float64(port) {
			t.Errorf("%s: ports %v", name, c["ports"])
		}
		for _, probe := range []string{"livenessProbe", "readinessProbe"} {
			if get(c, probe, "httpGet", "path") != "/healthz" || get(c, probe, "httpGet", "port") != pname {
				t.Errorf("%s: %s %v", name, probe, c[probe])
			}
		}
		found := false
		for _, p := range get(svc, "spec", "ports").([]any) {
			found = found || (get(p, "name") == pname && get(p, "targetPort") == pname &&
				num(fmt.Sprint(get(p, "port"))) == float64(port))
		}
		if !found {
			t.Errorf("%s: not in the Service's ports %v", name, get(svc, "spec", "ports"))
		}
	}
	if len(all(docs, "ServiceMonitor")) != 0 {
		t.Errorf("a ServiceMonitor by default (its CRD may not be installed)")
	}
	docs = render(t, "--set", "agents.metrics.serviceMonitor.enabled=true", "--set", "agents.metrics.serviceMonitor.labels.release=kps")
	sm := find(docs, "ServiceMonitor", "t-agents")
	if get(sm, "metadata", "labels", "release") != "kps" || get(sm, "apiVersion") != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor metadata: %v %v", sm["apiVersion"], get(sm, "metadata"))
	}
	svc = find(docs, "Service", "t-agents-metrics")
	for k, v := range get(sm, "spec", "selector", "matchLabels").(obj) {
		if get(svc, "metadata", "labels", k) != v {
			t.Errorf("the ServiceMonitor selects %s=%v, the Service does not have it", k, v)
		}
	}
	var ports []string
	for _, e := range get(sm, "spec", "endpoints").([]any) {
		ports = append(ports, fmt.Sprint(get(e, "port")))
		if get(e, "path") != "/metrics" {
			t.Errorf("endpoint %v", e)
		}
	}
	if strings.Join(ports, ",") != "m-collector,m-enforcer,m-identity" {
		t.Errorf("ServiceMonitor endpoints %v", ports)
	}
	if out := renderErr(t, "--set", "agents.logFormat=yaml"); !strings.Contains(out, "logFormat") {
		t.Errorf("logFormat=yaml is not refused: %s", out)
	}
	if out := renderErr(t, "--set", "agents.metrics.collectorPort=80"); !strings.Contains(out, "collectorPort") {
		t.Errorf("a privileged port is not refused: %s", out)
	}
}

// notes renders NOTES.txt (helm template leaves it out) with helm's own engine.
func notes(t *testing.T, values map[string]any) string {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "t", Namespace: "cpi2", IsInstall: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	return out["cpi2/templates/NOTES.txt"]
}

// NOTES.txt says what was installed and how to reach it, with the names the chart gives.
func TestNotes(t *testing.T) {
	text := notes(t, map[string]any{})
	for _, want := range []string{
		"release t in namespace cpi2", "kubectl -n cpi2 get daemonset t-agents",
		"curl -s localhost:9402/metrics | grep cpi2_enforcer_caps_in_force", "Service t-agents-metrics",
		"kubectl -n cpi2 get flinkdeployments", "port-forward service/t-grafana 3000",
		"get secret t-clickhouse -o jsonpath='{.data.password}'",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("NOTES.txt has no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "DRY RUN") || strings.Contains(text, "ServiceMonitor") {
		t.Errorf("NOTES.txt by default:\n%s", text)
	}
	text = notes(t, map[string]any{"agents": map[string]any{"enforcer": map[string]any{"dryRun": true}},
		"grafana": map[string]any{"enabled": false}})
	if !strings.Contains(text, "DRY RUN, no cgroup is written") || strings.Contains(text, "t-grafana") {
		t.Errorf("NOTES.txt with a dry run and no Grafana:\n%s", text)
	}
}

// Both FlinkDeployments report through Flink's Prometheus reporter on pipeline.metricsPort (the
// operator writes flinkConfiguration over the image's configuration), the pods name the port and
// are annotated for a Prometheus's pod discovery; the reporter's jar is one the Flink image's lib
// gets (stack/jars/pom.xml's flink profile, which docker/images.sh copies there).
func TestFlinkReportsToPrometheus(t *testing.T) {
	pom, err := os.ReadFile("../../../stack/jars/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pom), "<artifactId>flink-metrics-prometheus</artifactId>") {
		t.Fatal("stack/jars/pom.xml fetches no flink-metrics-prometheus")
	}
	for _, fd := range all(render(t, "--set", "pipeline.metricsPort=19249"), "FlinkDeployment") {
		name := get(fd, "metadata", "name")
		conf := get(fd, "spec", "flinkConfiguration").(obj)
		if conf["metrics.reporter.prom.factory.class"] != "org.apache.flink.metrics.prometheus.PrometheusReporterFactory" ||
			conf["metrics.reporter.prom.port"] != "19249" {
			t.Errorf("%v: reporter %v", name, conf)
		}
		pt := get(fd, "spec", "podTemplate")
		if get(pt, "metadata", "annotations", "prometheus.io/port") != "19249" ||
			get(pt, "metadata", "annotations", "prometheus.io/scrape") != "true" {
			t.Errorf("%v: annotations %v", name, get(pt, "metadata"))
		}
		if num(fmt.Sprint(get(pt, "spec", "containers", 0, "ports", 0, "containerPort"))) != 19249 {
			t.Errorf("%v: ports %v", name, get(pt, "spec", "containers", 0, "ports"))
		}
	}
}
