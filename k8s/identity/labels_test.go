package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// labelFields splits a line as the collector's label_tokens does (collectors/collector/src/
// rules.c): blanks (space, tab, CR) separate fields, except inside double quotes (where a
// backslash keeps the next character), and '#' outside quotes starts a comment.
func labelFields(t *testing.T, line string) []string {
	t.Helper()
	var f []string
	var cur strings.Builder
	quoted, in := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !quoted && (c == '#') {
			break
		}
		if !quoted && (c == ' ' || c == '\t' || c == '\r') {
			if in {
				f = append(f, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		in = true
		cur.WriteByte(c)
		if quoted && c == '\\' && i+1 < len(line) {
			i++
			cur.WriteByte(line[i])
		} else if c == '"' {
			quoted = !quoted
		}
	}
	if quoted {
		t.Fatalf("a double quote left open: %q", line)
	}
	if in {
		f = append(f, cur.String())
	}
	return f
}

// parseLabels reads a labels file as the collector's labels_parse does
// (collectors/collector/src/rules.c): fields as labelFields splits them, 4 of them, then
// "protected" and the endpoint's options (scrape=, work=, latency=, latency_quantile=; work= and
// latency= need scrape=, scrape= needs one of them), a known class. It returns the lines by task
// (task, job, id, class, and "protected" when given), with the leading '/' the collector strips;
// options holds each task's endpoint options.
func parseLabels(t *testing.T, text string) map[string][]string {
	out, _ := parseLabelsOptions(t, text)
	return out
}

func parseLabelsOptions(t *testing.T, text string) (map[string][]string, map[string]map[string]string) {
	t.Helper()
	classes := map[string]bool{"latency_sensitive": true, "batch": true, "best_effort": true, "unknown": true,
		"guaranteed": true, "burstable": true, "besteffort": true}
	out := map[string][]string{}
	options := map[string]map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		all := labelFields(t, line)
		if len(all) == 0 {
			continue
		}
		f := all
		if len(f) > 4 {
			f = all[:4]
		}
		opts := map[string]string{}
		for _, o := range all[min(4, len(all)):] {
			k, v, ok := strings.Cut(o, "=")
			switch {
			case o == "protected":
				f = append(f, o)
			case ok && v != "" && (k == "scrape" || k == "work" || k == "latency" || k == "latency_quantile") && opts[k] == "":
				opts[k] = v
			default:
				t.Fatalf("line %d: the collector refuses the whole file at %q", n+1, o)
			}
		}
		if (opts["scrape"] == "") != (opts["work"] == "" && opts["latency"] == "") ||
			(opts["latency_quantile"] != "" && opts["latency"] == "") {
			t.Fatalf("line %d: options the collector refuses: %q", n+1, opts)
		}
		if len(f) < 4 {
			t.Fatalf("line %d: the collector refuses the whole file at %q", n+1, line)
		}
		if !classes[strings.ToLower(f[3])] {
			t.Fatalf("line %d: unknown class %q", n+1, f[3])
		}
		if len(f[1]) > maxField || len(f[2]) > maxField {
			t.Fatalf("line %d: job or task_id longer than the collector keeps", n+1)
		}
		out[strings.TrimPrefix(f[0], "/")] = f[1:]
		if len(opts) > 0 {
			options[strings.TrimPrefix(f[0], "/")] = opts
		}
	}
	return out, options
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
	// a task with a metrics endpoint: its options after the class, one token each
	c := Task{Job: "ns/deployment/cache", Pod: "cache-0", Class: ClassLatencySensitive,
		Scrape: &Scrape{URL: "http://10.1.2.3:9121/metrics", Work: `redis_commands_total{cmd=~"get|set"}`,
			Latency: `http_request_duration_seconds{path="/a b #1"}`, Quantile: "0.99"}}
	data, _ = Render([]Line{{"k/pod3", c}}, "node n")
	if !strings.Contains(string(data), "k/pod3 ns/deployment/cache cache-0 latency_sensitive scrape=http://10.1.2.3:9121/metrics "+
		`work=redis_commands_total{cmd=~"get|set"} latency=http_request_duration_seconds{path="/a b #1"} latency_quantile=0.99`+"\n") {
		t.Fatalf("got\n%s", data)
	}
	m, opts := parseLabelsOptions(t, string(data))
	if strings.Join(m["k/pod3"], " ") != "ns/deployment/cache cache-0 latency_sensitive" ||
		opts["k/pod3"]["latency"] != `http_request_duration_seconds{path="/a b #1"}` || opts["k/pod3"]["latency_quantile"] != "0.99" {
		t.Fatalf("parsed %q %q", m, opts)
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
