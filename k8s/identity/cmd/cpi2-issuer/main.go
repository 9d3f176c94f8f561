// cpi2-issuer: gives each node's agent pods that node's own credentials (its host key) and
// nothing else; the master key stays in the issuer. See k8s/README.md.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cpi2/k8s/identity/issuer"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// version is the project's, set by the build (-X main.version=, k8s/Makefile).
var version = "unknown"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "cpi2-issuer: %v\n", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "fetch" {
		return fetch(args[1:], stderr)
	}
	fs := flag.NewFlagSet("cpi2-issuer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":8443", "address to serve POST /v1/credentials on")
	cert := fs.String("tls-cert", "", "TLS certificate file (with --tls-key; plain HTTP without them)")
	key := fs.String("tls-key", "", "TLS key file")
	masterFile := fs.String("master-file", "", "file holding the master key: 64 hex digits (required)")
	keyID := fs.String("key-id", "1", "the master's id (cpi2.host.key.id), digits")
	audience := fs.String("audience", "cpi2-issuer", "the audience agents' tokens must be for")
	namespace := fs.String("namespace", "", "the agents' namespace (required)")
	agents := fs.String("agents", "app.kubernetes.io/component=agents", "label selector of the agent pods")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (in-cluster config without it)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: cpi2-issuer --master-file FILE --namespace NS [options]\n"+
			"       cpi2-issuer fetch --url URL --token-file FILE --out-dir DIR BASE... (an agent's init step; fetch --help)\n\n"+
			"Answers POST /v1/credentials (Authorization: Bearer <projected service-account token of an\n"+
			"agent pod>) with the cpi2.host, cpi2.host.key and cpi2.host.key.id lines of the pod's node.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		fmt.Fprintf(stdout, "cpi2-issuer %s\n", version)
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if *masterFile == "" || *namespace == "" {
		return errors.New("--master-file and --namespace are required (see --help)")
	}
	if (*cert == "") != (*key == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if *keyID == "" || strings.Trim(*keyID, "0123456789") != "" || len(*keyID) > 9 {
		return fmt.Errorf("--key-id %q: digits, at most 9", *keyID)
	}
	raw, err := os.ReadFile(*masterFile)
	if err != nil {
		return err
	}
	master, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(master) != 32 {
		return fmt.Errorf("%s: the master key is 64 hex digits", *masterFile)
	}
	sel, err := labels.Parse(*agents)
	if err != nil {
		return fmt.Errorf("--agents: %v", err)
	}
	var cfg *rest.Config
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("kubernetes config: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lg := log.New(stderr, "cpi2-issuer: ", log.LstdFlags|log.LUTC)
	srv := &http.Server{
		Addr: *listen,
		Handler: &issuer.Issuer{Client: client, Master: master, KeyID: *keyID, Audience: *audience,
			Namespace: *namespace, Agents: sel, Log: lg, Timeout: 10 * time.Second},
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 20 * time.Second,
		MaxHeaderBytes: issuer.MaxToken + 4096,
	}
	if *cert == "" {
		lg.Printf("serving plain HTTP on %s (no --tls-cert): tokens cross the network in clear", *listen)
		return srv.ListenAndServe()
	}
	lg.Printf("serving HTTPS on %s", *listen)
	return srv.ListenAndServeTLS(*cert, *key)
}

// fetch is an agent pod's init step: it asks the issuer for its node's lines with the pod's
// token and writes each BASE client file, those lines appended, into DIR (a memory volume).
func fetch(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("cpi2-issuer fetch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the issuer's POST /v1/credentials URL (required)")
	tokenFile := fs.String("token-file", "", "the pod's projected service-account token (required)")
	caFile := fs.String("ca-file", "", "CA certificate of the issuer's TLS certificate (https URLs)")
	outDir := fs.String("out-dir", "", "directory the client files are written to (required)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long (retries every 2 s until then)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *tokenFile == "" || *outDir == "" || fs.NArg() == 0 {
		return errors.New("fetch: --url, --token-file, --out-dir and at least one BASE client file are required")
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	tr := &http.Transport{}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate", *caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var lines []byte
	for t0 := time.Now(); ; time.Sleep(2 * time.Second) {
		req, _ := http.NewRequest(http.MethodPost, *url, nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := hc.Do(req)
		if err == nil {
			lines, err = io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(lines)))
			if resp.StatusCode < 500 {
				return err // refused: retrying would not help
			}
		}
		if time.Since(t0) > *timeout {
			return fmt.Errorf("no credentials within %s: %v", *timeout, err)
		}
		fmt.Fprintf(stderr, "cpi2-issuer fetch: %v (retrying)\n", err)
	}
	for _, base := range fs.Args() {
		text, err := os.ReadFile(base)
		if err != nil {
			return err
		}
		out := filepath.Join(*outDir, filepath.Base(base))
		if err := os.WriteFile(out, append(append(text, '\n'), lines...), 0o400); err != nil {
			return err
		}
	}
	return nil
}
