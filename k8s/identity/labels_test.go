package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseLabels reads a labels file as the collector's labels_parse does
// (collectors/collector/src/rules.c): '#' starts a comment anywhere, fields split on spaces,
// tabs and CR, 4 or 5 of them, the fifth only "protected", a known class. It returns the lines
// by task, with the leading '/' the collector strips.
func parseLabels(t *testing.T, text string) map[string][]string {
	t.Helper()
	classes := map[string]bool{"latency_sensitive": true, "batch": true, "best_effort": true, "unknown": true,
		"guaranteed": true, "burstable": true, "besteffort": true}
	out := map[string][]string{}
	for n, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 || len(f) > 5 || (len(f) == 5 && f[4] != "protected") {
			t.Fatalf("line %d: the collector refuses the whole file at %q", n+1, line)
		}
		if !classes[strings.ToLower(f[3])] {
			t.Fatalf("line %d: unknown class %q", n+1, f[3])
		}
		if len(f[1]) > maxField || len(f[2]) > maxField {
			t.Fatalf("line %d: job or task_id longer than the collector keeps", n+1)
		}
		out[strings.TrimPrefix(f[0], "/")] = f[1:]
	}
	return out
}

func TestRender(t *testing.T) {
	a := Task{Job: "ns/deployment/web", Pod: "web-1", Class: ClassBatch}
	b := Task{Job: "ns/statefulset/db", Pod: "db-0", Class: ClassLatencySensitive, Protected: true}
	data, dropped := Render([]Line{{"z/pod2", b}, {"a/pod1", a}, {"m/dup", a}, {"m/dup", b}}, "node n; replaced whole")
	got := string(data)
	want := "# node n; replaced whole\n# TASK JOB TASK_ID CLASS [protected]\n" +
		"a/pod1 ns/deployment/web web-1 batch\n" +
		"z/pod2 ns/statefulset/db db-0 latency_sensitive protected\n"
	if got != want || len(dropped) != 1 || dropped[0] != "m/dup" {
		t.Fatalf("got\n%s dropped %q\nwant\n%s", got, dropped, want)
	}
	m := parseLabels(t, got)
	if len(m) != 2 || strings.Join(m["z/pod2"], " ") != "ns/statefulset/db db-0 latency_sensitive protected" {
		t.Fatalf("parsed: %q", m)
	}
	if data, _ := Render(nil, "empty"); len(parseLabels(t, string(data))) != 0 {
		t.Fatal("an empty mapping is a file of comments")
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "labels")
	if wrote, err := WriteAtomic(path, []byte("one\n")); !wrote || err != nil {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	st1, _ := os.Stat(path)
	if st1.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st1.Mode())
	}
	time.Sleep(10 * time.Millisecond)
	// the same content: no write, so the collector does not reload
	if wrote, err := WriteAtomic(path, []byte("one\n")); wrote || err != nil {
		t.Fatalf("same content: %v %v", wrote, err)
	}
	if st, _ := os.Stat(path); !st.ModTime().Equal(st1.ModTime()) {
		t.Fatal("same content changed the mtime")
	}
	// a reader holding the old file keeps it whole; the path gets the new one (rename)
	old, _ := os.Open(path)
	defer old.Close()
	if wrote, err := WriteAtomic(path, []byte("two\n")); !wrote || err != nil {
		t.Fatalf("second write: %v %v", wrote, err)
	}
	buf := make([]byte, 16)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "one\n" {
		t.Fatalf("the open file changed under its reader: %q", buf[:n])
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Fatalf("content %q", b)
	}
	// nothing but the file is left in the folder
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// too big for the collector: refused, the old file stays
	if _, err := WriteAtomic(path, make([]byte, maxFileBytes+1)); err == nil {
		t.Fatal("a file over 16 MiB was written")
	}
	if os.Getuid() != 0 {
		// a folder it cannot write to: an error, the old file stays (root writes anyway)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		if _, err := WriteAtomic(path, []byte("three\n")); err == nil {
			t.Fatal("wrote into a read-only folder")
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Fatalf("after refusals: %q", b)
	}
}
