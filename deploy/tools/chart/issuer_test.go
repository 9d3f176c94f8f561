package chart

import (
	"strings"
	"testing"
)

// With issuer.enabled the master key is mounted in the issuer alone; the agents' init step asks
// it with a token of audience cpi2-issuer, and the collector and the enforcer read the client
// files it writes. Off (the default), nothing of it is rendered.
func TestIssuer(t *testing.T) {
	if d := find(render(t), "Deployment", "t-issuer"); d != nil {
		t.Error("the issuer is rendered while off")
	}
	docs := render(t, "-f", chartDir+"/values-issuer.yaml")
	dep := find(docs, "Deployment", "t-issuer")
	if dep == nil {
		t.Fatal("no Deployment t-issuer")
	}
	// the master's Secret: mounted by the issuer's pod, by no other object
	for _, d := range docs {
		vols, _ := get(d, "spec", "template", "spec", "volumes").([]any)
		for _, v := range vols {
			if get(v, "secret", "secretName") == "cpi2-host-master" && !(d["kind"] == "Deployment" && get(d, "metadata", "name") == "t-issuer") {
				t.Errorf("%s %s mounts the master", d["kind"], get(d, "metadata", "name"))
			}
		}
	}
	iss := get(dep, "spec", "template", "spec", "containers", 0).(obj)
	if a := strs(iss["args"]); !has(a, "--master-file=/etc/cpi2-issuer/master/master") || !has(a, "--namespace=cpi2") ||
		!has(a, "--agents=app.kubernetes.io/instance=t,app.kubernetes.io/component=agents") {
		t.Errorf("issuer args: %v", a)
	}
	rules := get(find(docs, "ClusterRole", "t-issuer"), "rules")
	if r := get(rules, 0); len(rules.([]any)) != 1 || strings.Join(strs(get(r, "resources")), ",") != "tokenreviews" || strings.Join(strs(get(r, "verbs")), ",") != "create" {
		t.Errorf("issuer ClusterRole: %v", rules)
	}
	role := get(find(docs, "Role", "t-issuer"), "rules")
	if r := get(role, 0); len(role.([]any)) != 1 || strings.Join(strs(get(r, "resources")), ",") != "pods" || strings.Join(strs(get(r, "verbs")), ",") != "get" {
		t.Errorf("issuer Role: %v", role)
	}
	pod := get(find(docs, "DaemonSet", "t-agents"), "spec", "template", "spec").(obj)
	init := get(pod, "initContainers", 0).(obj)
	if a := strs(init["args"]); init["name"] != "credentials" || !has(a, "--url=https://t-issuer.cpi2.svc:8443/v1/credentials") ||
		!has(a, "/etc/cpi2/kafka-collector.properties") || !has(a, "/etc/cpi2/kafka-enforcer.properties") {
		t.Errorf("init step: %v", init)
	}
	for _, v := range pod["volumes"].([]any) {
		if get(v, "name") == "issuer-token" && get(v, "projected", "sources", 0, "serviceAccountToken", "audience") != "cpi2-issuer" {
			t.Errorf("the init step's token: %v", v)
		}
	}
	for _, who := range []string{"collector", "enforcer"} {
		c := container(t, docs, who)
		if !has(strs(c["args"]), "--kafka-client-file=/run/cpi2-client/kafka-"+who+".properties") || mount(c, "client")["readOnly"] != true {
			t.Errorf("%s: args %v, client mount %v", who, c["args"], mount(c, "client"))
		}
	}
}
