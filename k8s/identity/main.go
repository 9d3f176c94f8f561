// cpi2-k8s-identity: maps the pods of one Kubernetes node to CPI² tasks (job = namespace and
// owning workload, task_id = pod name, class from the QoS class or an annotation) and keeps
// the collector's labels file up to date. See README.md.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// version is the project's, set by the build (-X main.version=, k8s/Makefile).
var version = "unknown"

// options are the command line; a config file sets the same names (key = value lines).
type options struct {
	config       string
	node         string
	labelsFile   string
	kubeconfig   string
	drivers      string
	cgroupParent string
	namespaces   string
	enforceFile  string
	enforceNS    string
	annotations  string
	debounce     time.Duration
	retry        time.Duration
	ownerTTL     time.Duration
	resync       time.Duration
	maxPods      int
	once         bool
	version      bool
	metricsAddr  string
	healthBound  time.Duration
	logFormat    string
}

func newFlags(o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cpi2-k8s-identity", flag.ContinueOnError)
	fs.SetOutput(out)
	node := os.Getenv("NODE_NAME")
	fs.StringVar(&o.config, "config", "", "read options from FILE (key = value lines, the names below without --); the command line wins")
	fs.StringVar(&o.node, "node", node, "the node whose pods are mapped (default $NODE_NAME)")
	fs.StringVar(&o.labelsFile, "labels-file", "/run/cpi2/labels", "the collector's labels file, replaced whole on every change")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: the in-cluster service account, else $KUBECONFIG)")
	fs.StringVar(&o.drivers, "cgroup-driver", "systemd,cgroupfs", "the kubelet's cgroup driver(s): systemd, cgroupfs or both (comma-separated)")
	fs.StringVar(&o.cgroupParent, "cgroup-parent", "", "the kubelet's --cgroup-root relative to the collector's root, ending in / (default: the root)")
	fs.StringVar(&o.namespaces, "namespaces", "", "opted-in namespaces (comma-separated); pods elsewhere are left out of the file (default: all)")
	fs.StringVar(&o.enforceFile, "enforce-file", "", "also write the enforcer's enforce_file here: the cgroups incidents may cap, those of --enforce-namespaces (default: not written, every pod may be capped)")
	fs.StringVar(&o.enforceNS, "enforce-namespaces", "", "namespaces whose pods may be capped (comma-separated; none: the enforce file lists no pod); protected pods never")
	fs.StringVar(&o.annotations, "annotation-namespaces", "", "namespaces whose pods' "+AnnotationClass+" and "+AnnotationProtected+" annotations are honoured (comma-separated; *: every namespace; default none: the QoS class decides, nothing is protected)")
	fs.DurationVar(&o.debounce, "debounce", 200*time.Millisecond, "wait this long after a change for more before writing")
	fs.DurationVar(&o.retry, "retry", 5*time.Second, "try again this often while a pod's owner cannot be read")
	fs.DurationVar(&o.ownerTTL, "owner-ttl", 10*time.Minute, "keep a ReplicaSet's or Job's owner this long")
	fs.DurationVar(&o.resync, "resync", 30*time.Second, "sync the pods this often without events too (0: only on events)")
	fs.IntVar(&o.maxPods, "max-pods", 2000, "map at most this many pods")
	fs.BoolVar(&o.once, "once", false, "write the file once from the first list of pods and exit")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.metricsAddr, "metrics-address", "", "serve /metrics and /healthz on HOST:PORT (':PORT' every address; empty: off)")
	fs.DurationVar(&o.healthBound, "health-timeout", 2*time.Minute, "/healthz fails when no sync of the pods completed for this long")
	fs.StringVar(&o.logFormat, "log-format", "text", "text (one line an event) or json (one JSON object a line)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: cpi2-k8s-identity [options]\n\n"+
			"Watches the pods of one node and writes the collector's labels file (TASK JOB TASK_ID CLASS [protected]).\n"+
			"Annotations, in the namespaces of --annotation-namespaces only: %s (latency_sensitive, batch, best_effort) overrides the QoS class; %s=true marks a pod protected.\n\n",
			AnnotationClass, AnnotationProtected)
		fs.PrintDefaults()
	}
	return fs
}

// applyConfig sets every option of the file that the command line did not set.
func applyConfig(fs *flag.FlagSet, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		key = strings.ReplaceAll(key, "_", "-")
		if !ok || fs.Lookup(key) == nil || key == "config" {
			return fmt.Errorf("%s:%d: expected 'option = value' with a known option, got %q", path, n, line)
		}
		if given[key] {
			continue
		}
		if err := fs.Set(key, value); err != nil {
			return fmt.Errorf("%s:%d: %s: %v", path, n, key, err)
		}
	}
	return sc.Err()
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parseArgs turns the command line (and config file) into a Config.
func parseArgs(args []string, out io.Writer) (options, Config, error) {
	var o options
	fs := newFlags(&o, out)
	if err := fs.Parse(args); err != nil {
		return o, Config{}, err
	}
	if fs.NArg() > 0 {
		return o, Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.version {
		return o, Config{}, errVersion
	}
	if o.config != "" {
		if err := applyConfig(fs, o.config); err != nil {
			return o, Config{}, err
		}
	}
	cfg := Config{Node: o.node, LabelsFile: o.labelsFile, CgroupParent: o.cgroupParent,
		Debounce: o.debounce, Retry: o.retry, Resync: o.resync, MaxPods: o.maxPods, Namespaces: map[string]bool{}}
	if cfg.Node == "" || !dnsSubdomain.MatchString(cfg.Node) {
		return o, cfg, fmt.Errorf("--node: %q is not a node name (set --node or $NODE_NAME)", cfg.Node)
	}
	if cfg.LabelsFile == "" {
		return o, cfg, errors.New("--labels-file is empty")
	}
	for _, d := range splitList(o.drivers) {
		if d != DriverSystemd && d != DriverCgroupfs {
			return o, cfg, fmt.Errorf("--cgroup-driver: %q is not systemd or cgroupfs", d)
		}
		cfg.Drivers = append(cfg.Drivers, d)
	}
	if len(cfg.Drivers) == 0 {
		return o, cfg, errors.New("--cgroup-driver: none given")
	}
	if !cgroupParent.MatchString(cfg.CgroupParent) {
		return o, cfg, fmt.Errorf("--cgroup-parent: %q is not a relative path ending in / (letters, digits, '.', '_', '-')", cfg.CgroupParent)
	}
	for _, ns := range splitList(o.namespaces) {
		if !dnsLabel.MatchString(ns) {
			return o, cfg, fmt.Errorf("--namespaces: %q is not a namespace name", ns)
		}
		cfg.Namespaces[ns] = true
	}
	cfg.EnforceFile, cfg.EnforceNamespaces = o.enforceFile, map[string]bool{}
	for _, ns := range splitList(o.enforceNS) {
		if !dnsLabel.MatchString(ns) {
			return o, cfg, fmt.Errorf("--enforce-namespaces: %q is not a namespace name", ns)
		}
		cfg.EnforceNamespaces[ns] = true
	}
	cfg.Annotations = AnnotationPolicy{Namespaces: map[string]bool{}}
	for _, ns := range splitList(o.annotations) {
		if ns == "*" {
			cfg.Annotations.All = true
		} else if !dnsLabel.MatchString(ns) {
			return o, cfg, fmt.Errorf("--annotation-namespaces: %q is not a namespace name (or *)", ns)
		} else {
			cfg.Annotations.Namespaces[ns] = true
		}
	}
	if len(cfg.EnforceNamespaces) > 0 && cfg.EnforceFile == "" {
		return o, cfg, errors.New("--enforce-namespaces needs --enforce-file (the enforcer reads the list there)")
	}
	if cfg.Debounce < 0 || cfg.Retry <= 0 || o.ownerTTL <= 0 || cfg.MaxPods <= 0 || cfg.Resync < 0 {
		return o, cfg, errors.New("--debounce and --resync must be >= 0, --retry, --owner-ttl and --max-pods > 0")
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return o, cfg, fmt.Errorf("--log-format: %q is not text or json", o.logFormat)
	}
	if o.metricsAddr != "" && (o.healthBound <= 0 || (cfg.Resync > 0 && o.healthBound <= cfg.Resync)) {
		return o, cfg, errors.New("--health-timeout must be above --resync")
	}
	return o, cfg, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if c, err := rest.InClusterConfig(); err == nil {
			return c, nil
		}
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig == "" {
		return nil, errors.New("not in a cluster and no --kubeconfig or $KUBECONFIG")
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// errVersion: --version was asked for (printed by run).
var errVersion = errors.New("version")

func run(args []string, stdout, stderr io.Writer) int {
	o, cfg, err := parseArgs(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errVersion) {
		fmt.Fprintf(stdout, "cpi2-k8s-identity %s\n", version)
		return 0
	}
	logger := log.New(stderr, "", log.LstdFlags|log.LUTC)
	if err == nil && o.logFormat == "json" {
		stderr = &jsonLog{out: stderr}
		logger = log.New(stderr, "", 0)
	}
	if err != nil {
		logger.Printf("identity: %v", err)
		return 2
	}
	klog.SetOutput(stderr)
	klog.LogToStderr(false)
	rc, err := restConfig(o.kubeconfig)
	if err != nil {
		logger.Printf("identity: kubeconfig: %v", err)
		return 2
	}
	rc.UserAgent = "cpi2-k8s-identity"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		logger.Printf("identity: client: %v", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	owners := &APIOwners{Client: client, TTL: o.ownerTTL, MaxSize: 4 * cfg.MaxPods, Now: time.Now}
	id := New(cfg, client, owners, logger)
	if o.metricsAddr != "" {
		ln, err := id.serve(o.metricsAddr, o.healthBound)
		if err != nil {
			logger.Printf("identity: %v", err)
			return 2
		}
		defer ln.Close()
	}
	if err := id.Run(ctx, o.once); err != nil {
		logger.Printf("identity: %v", err)
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
