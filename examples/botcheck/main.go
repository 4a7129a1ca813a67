// Command botcheck answers 200 to every request and prints, for each, what
// a Web Bot Auth verifier concludes (see botauth.Verifier): one line on
// standard output,
//
//	VERDICT METHOD URL: REASON
//
// where VERDICT is verified, invalid, expired, unknown or unsigned, and the
// reason is left out when the request is verified. Point a signed crawler
// at it to check a setup before a site does:
//
//	go run ./examples/botcheck -addr 127.0.0.1:8081
//
// It listens on plain HTTP; the key directory named by each request's
// Signature-Agent is fetched over HTTPS, from public addresses only. For a
// local test, -ca FILE trusts the PEM certificate(s) in FILE when fetching
// a key directory, and then loopback and private addresses are allowed.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/politecrawl/robots/botauth"
)

// config is what the command line asks for.
type config struct {
	addr, ca string
}

// parse reads the command line (without the program name).
func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("botcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8081", "listen on `HOST:PORT` (plain HTTP)")
	fs.StringVar(&c.ca, "ca", "", "trust the PEM certificate(s) in `FILE` when fetching a key directory")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

func main() {
	c, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", c.addr)
	}
	if err == nil {
		fmt.Fprintf(os.Stderr, "botcheck: listening on http://%s\n", ln.Addr())
		err = serve(c, ln, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "botcheck:", err)
		os.Exit(1)
	}
}

// serve answers on ln until it fails, printing a line per request on out.
func serve(c config, ln net.Listener, out io.Writer) error {
	v, err := newVerifier(c.ca)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler(v, out), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// newVerifier is the verifier botcheck uses: the default one, or with
// caFile, one whose client trusts the certificates in it.
func newVerifier(caFile string) (*botauth.Verifier, error) {
	if caFile == "" {
		return botauth.NewVerifier()
	}
	data, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("-ca %s: no PEM certificate", caFile)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:       &tls.Config{RootCAs: pool},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
	}}
	return botauth.NewVerifier(botauth.VerifyClient(client))
}

// handler answers 200 to every request and prints its verdict on out.
func handler(v *botauth.Verifier, out io.Writer) http.Handler {
	var mu sync.Mutex
	return v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := botauth.ResultOf(r)
		line := fmt.Sprintf("%s %s http://%s%s", res.Verdict, r.Method, r.Host, r.URL.RequestURI())
		if res.Verdict != botauth.Verified {
			line += ": " + res.Reason
		}
		mu.Lock()
		fmt.Fprintln(out, line)
		mu.Unlock()
		fmt.Fprintln(w, line)
	}))
}
