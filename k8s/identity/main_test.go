package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"--help"}, &out, &errb); rc != 0 {
		t.Fatalf("--help: exit %d", rc)
	}
	for _, s := range []string{"-labels-file", "-cgroup-driver", "-namespaces", "-enforce-file", "-enforce-namespaces", "-annotation-namespaces", "-config", AnnotationClass, AnnotationProtected} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("--help lacks %s:\n%s", s, out.String())
		}
	}
}

// --version prints the version the build set (k8s/Makefile: the project's) and exits 0, whatever
// else is missing (no node, no cluster).
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"--version"}, &out, &errb); rc != 0 || out.String() != "cpi2-k8s-identity "+version+"\n" {
		t.Fatalf("--version: exit %d, %q %q", rc, out.String(), errb.String())
	}
}

// A config file sets what the command line does not; the command line wins; errors name the
// file, the line and the option, and exit 2.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "identity.conf")
	os.WriteFile(conf, []byte("# comment\nnode = node-x\nlabels_file = /run/x/labels  # trailing\n"+
		"cgroup-driver = systemd\nnamespaces = shop, tools\ndebounce = 1s\n"+
		"enforce_file = /run/x/enforce\nenforce_namespaces = shop\nannotation_namespaces = infra\n"), 0o644)
	_, cfg, err := parseArgs([]string{"--config", conf, "--debounce", "50ms"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node != "node-x" || cfg.LabelsFile != "/run/x/labels" || strings.Join(cfg.Drivers, ",") != "systemd" ||
		!cfg.Namespaces["shop"] || !cfg.Namespaces["tools"] || len(cfg.Namespaces) != 2 || cfg.Debounce != 50*time.Millisecond ||
		cfg.EnforceFile != "/run/x/enforce" || !cfg.EnforceNamespaces["shop"] || len(cfg.EnforceNamespaces) != 1 ||
		!cfg.Annotations.Honours("infra") || cfg.Annotations.Honours("shop") {
		t.Fatalf("%+v", cfg)
	}
	// by default no namespace's pods choose their class or protection; * lets every one
	if _, cfg, err := parseArgs([]string{"--node", "n"}, &bytes.Buffer{}); err != nil || cfg.Annotations.Honours("default") {
		t.Fatalf("default annotation policy %+v, %v", cfg.Annotations, err)
	}
	if _, cfg, err := parseArgs([]string{"--node", "n", "--annotation-namespaces", "*"}, &bytes.Buffer{}); err != nil || !cfg.Annotations.Honours("any") {
		t.Fatalf("* annotation policy %+v, %v", cfg.Annotations, err)
	}
	bad := map[string]string{
		"colour = blue\n":                       "identity.conf:1: expected 'option = value' with a known option",
		"node = n\ncgroup-driver = docker\n":    "--cgroup-driver: \"docker\" is not systemd or cgroupfs",
		"node = n\nnamespaces = Shop\n":         "--namespaces: \"Shop\" is not a namespace name",
		"node = n\ncgroup-parent = /abs/\n":     "--cgroup-parent",
		"node = n\ndebounce = soon\n":           "identity.conf:2: debounce",
		"node = bad node\n":                     "--node",
		"node = n\nconfig = other\n":            "identity.conf:2",
		"node = n\nenforce-namespaces = shop\n": "--enforce-namespaces needs --enforce-file",
		"node = n\nenforce_file = /run/cpi2/enforce\nenforce-namespaces = a,B\n": "--enforce-namespaces: \"B\"",
		"node = n\nannotation-namespaces = ok,No\n":                              "--annotation-namespaces: \"No\"",
	}
	for text, want := range bad {
		os.WriteFile(conf, []byte(text), 0o644)
		var errb bytes.Buffer
		if rc := run([]string{"--config", conf}, &bytes.Buffer{}, &errb); rc != 2 || !strings.Contains(errb.String(), want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", text, rc, errb.String(), want)
		}
	}
	t.Setenv("NODE_NAME", "")
	var errb bytes.Buffer
	if rc := run(nil, &bytes.Buffer{}, &errb); rc != 2 || !strings.Contains(errb.String(), "$NODE_NAME") {
		t.Errorf("no node: exit %d %q", rc, errb.String())
	}
}
