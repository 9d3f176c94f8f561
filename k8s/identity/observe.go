package main

// observe: the agent's /metrics (Prometheus text, the names and conventions of the C agents'
// libcpi2 httpd: cpi2_build_info, process_*, cpi2_<program>_progress_*) and /healthz (503 when
// no sync of the pods completed within the bound), and its JSON log lines (libcpi2's fields:
// time, level, module, msg).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A metric family's HELP and TYPE lines, then its series.
func family(b *bytes.Buffer, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func processMetrics(b *bytes.Buffer) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		family(b, "process_cpu_seconds_total", "counter", "User and system CPU time of the process, in seconds")
		fmt.Fprintf(b, "process_cpu_seconds_total %g\n", cpu)
	}
	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		var size, resident int64
		if _, err := fmt.Sscan(string(statm), &size, &resident); err == nil {
			family(b, "process_resident_memory_bytes", "gauge", "Resident memory of the process, in bytes")
			fmt.Fprintf(b, "process_resident_memory_bytes %d\n", resident*int64(os.Getpagesize()))
		}
	}
	family(b, "cpi2_build_info", "gauge", "The program and its version, always 1")
	fmt.Fprintf(b, "cpi2_build_info{program=\"identity\",version=%q} 1\n", version)
}

// metrics: what the identity agent did, as Prometheus text.
func (id *Identity) metrics(bound time.Duration) []byte {
	var b bytes.Buffer
	family(&b, "cpi2_identity_syncs_total", "counter", "Syncs of the node's pods into the labels file, by result")
	fmt.Fprintf(&b, "cpi2_identity_syncs_total{result=\"ok\"} %d\n", id.syncs.Load())
	fmt.Fprintf(&b, "cpi2_identity_syncs_total{result=\"error\"} %d\n", id.syncErrors.Load())
	family(&b, "cpi2_identity_file_writes_total", "counter", "Times the labels file was replaced")
	fmt.Fprintf(&b, "cpi2_identity_file_writes_total %d\n", id.writes.Load())
	family(&b, "cpi2_identity_pods", "gauge", "Pods of the last sync, by whether they are in the labels file")
	fmt.Fprintf(&b, "cpi2_identity_pods{state=\"mapped\"} %d\n", id.mapped.Load())
	fmt.Fprintf(&b, "cpi2_identity_pods{state=\"unmapped\"} %d\n", id.unmapped.Load())
	family(&b, "cpi2_identity_synced", "gauge", "1 once the first list of the node's pods came in")
	synced := 0
	if id.synced.Load() {
		synced = 1
	}
	fmt.Fprintf(&b, "cpi2_identity_synced %d\n", synced)
	processMetrics(&b)
	family(&b, "cpi2_identity_progress_age_seconds", "gauge",
		"Seconds since the last completed sync (since the start before the first); /healthz fails above the bound")
	fmt.Fprintf(&b, "cpi2_identity_progress_age_seconds %g\n", id.progressAge().Seconds())
	family(&b, "cpi2_identity_progress_bound_seconds", "gauge", "The bound of /healthz on the progress age")
	fmt.Fprintf(&b, "cpi2_identity_progress_bound_seconds %g\n", bound.Seconds())
	return b.Bytes()
}

func (id *Identity) progressAge() time.Duration {
	return time.Duration(time.Now().UnixNano() - id.alive.Load())
}

// handler: GET or HEAD of /metrics and /healthz.
func (id *Identity) handler(bound time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(id.metrics(bound))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		age := id.progressAge()
		if age > bound {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: no sync of the pods completed for %.1f s (bound %g s)\n", age.Seconds(), bound.Seconds())
			return
		}
		fmt.Fprintf(w, "ok: last progress %.1f s ago (bound %g s)\n", age.Seconds(), bound.Seconds())
	})
	return mux
}

// serve listens on address (HOST:PORT) and serves the handler until the listener is closed;
// requests are bounded as libcpi2's httpd bounds them (4 KiB of headers, 5 s to send them).
func (id *Identity) serve(address string, bound time.Duration) (net.Listener, error) {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address: %v", err)
	}
	srv := &http.Server{Handler: id.handler(bound), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 5 * time.Second, MaxHeaderBytes: 4096,
		ErrorLog: id.log}
	go srv.Serve(ln)
	id.log.Printf("identity: serving /metrics and /healthz on %s, healthy while a sync completes every %s", ln.Addr(), bound)
	return ln, nil
}

// jsonLog writes each log line as libcpi2's JSON log line: {"time","level","module","msg"}.
type jsonLog struct {
	mu  sync.Mutex
	out io.Writer
}

func (j *jsonLog) Write(p []byte) (int, error) {
	msg := strings.TrimRight(string(p), "\n")
	module, level := "identity", "info"
	if rest, ok := strings.CutPrefix(msg, "identity: "); ok {
		msg = rest
	} else if len(msg) > 0 && strings.ContainsRune("IWEF", rune(msg[0])) && strings.Contains(msg, "] ") {
		// klog's "E1128 07:00:00.000000 1 file.go:1] message"
		module, level = "client-go", map[byte]string{'I': "info", 'W': "warn", 'E': "error", 'F': "error"}[msg[0]]
		msg = msg[strings.Index(msg, "] ")+2:]
	}
	line, err := json.Marshal(struct {
		Time   string `json:"time"`
		Level  string `json:"level"`
		Module string `json:"module"`
		Msg    string `json:"msg"`
	}{time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), level, module, strings.ToValidUTF8(msg, "\uFFFD")})
	if err != nil {
		return 0, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.out.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}
