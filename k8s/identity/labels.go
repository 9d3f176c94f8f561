package main

// labels: the collector's labels file (collectors/README.md, "Mapping"): one line per cgroup,
// "TASK JOB TASK_ID CLASS [protected] [scrape=URL work=.. latency=.. latency_quantile=..]", TASK
// relative to the collector's root. The collector
// rereads it when its mtime changes and keeps what it had if a line does not parse, so the
// file is only ever replaced whole: written to a temporary file beside it, synced, renamed
// over it, and the folder synced.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// maxFileBytes is the largest labels file the collector reads (rules.c: 16 MiB).
const maxFileBytes = 16 << 20

// Line is one line of the labels file.
type Line struct {
	Path string
	Task Task
}

// Render makes the labels file: a comment, then one line per path, sorted. A path given twice
// (two pods claiming one uid) keeps neither, and is returned in dropped.
func Render(lines []Line, comment string) (out []byte, dropped []string) {
	sort.Slice(lines, func(i, j int) bool { return lines[i].Path < lines[j].Path })
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# TASK JOB TASK_ID CLASS [protected]\n", comment)
	for i, j := 0, 0; i < len(lines); i = j {
		for j = i + 1; j < len(lines) && lines[j].Path == lines[i].Path; j++ {
		}
		if j-i > 1 {
			dropped = append(dropped, lines[i].Path)
			continue
		}
		t := lines[i].Task
		fmt.Fprintf(&b, "%s %s %s %s", lines[i].Path, t.Job, t.Pod, t.Class)
		if t.Protected {
			b.WriteString(" protected")
		}
		if t.Scrape != nil {
			b.WriteString(t.Scrape.Options())
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), dropped
}

// RenderEnforce makes the enforcer's enforce_file (enforcer/README.md, "Per-namespace
// opt-in"): a comment, then the cgroup paths of lines whose pod is in one of namespaces and
// not protected, sorted, one a line; paths in dropped (claimed twice) are left out. It returns
// the file and the number of paths.
func RenderEnforce(lines []Line, dropped []string, namespaces map[string]bool, comment string) ([]byte, int) {
	skip := map[string]bool{}
	for _, p := range dropped {
		skip[p] = true
	}
	var paths []string
	for _, l := range lines {
		if namespaces[l.Task.Namespace] && !l.Task.Protected && !skip[l.Path] {
			paths = append(paths, l.Path)
		}
	}
	sort.Strings(paths)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# TASK\n", comment)
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.Bytes(), len(paths)
}

// WriteAtomic replaces path with data unless it already holds exactly that. It reports
// whether it wrote.
func WriteAtomic(path string, data []byte) (bool, error) {
	if len(data) > maxFileBytes {
		return false, fmt.Errorf("%d bytes, more than the collector reads (%d)", len(data), maxFileBytes)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if _, err = f.Write(data); err == nil {
		if err = f.Chmod(0o644); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return true, err
	}
	defer d.Close()
	return true, d.Sync()
}
