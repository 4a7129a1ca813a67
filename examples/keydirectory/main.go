// Command keydirectory serves a crawler's Web Bot Auth key directory: the
// JWK Set of its public keys at /.well-known/http-message-signatures-directory,
// signed, with its media type, Content-Digest and cache headers (see
// package botauth). Generate a key with
//
//	openssl genpkey -algorithm ed25519 -out bot-key.pem
//
// and serve it:
//
//	go run ./examples/keydirectory -key bot-key.pem -addr 127.0.0.1:8080
//
// Give -key once per key while rotating: a private JWK's "nbf" and "exp"
// members bound when it signs and how long it is published. Verifiers
// fetch the directory over HTTPS only: give -tls-cert and -tls-key, or
// serve it behind a proxy that terminates TLS for the host named in the
// crawler's Signature-Agent.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/politecrawl/robots/botauth"
)

// config is what the command line asks for.
type config struct {
	addr, cert, certKey string
	keys                []botauth.Key
}

// parse reads the command line (without the program name).
func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("keydirectory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Func("key", "private key `FILE` (PKCS#8 PEM or private JWK); repeat while rotating", func(path string) error {
		k, err := botauth.LoadKey(path)
		if err != nil {
			return err
		}
		c.keys = append(c.keys, k)
		return nil
	})
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	fs.StringVar(&c.cert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (with -tls-key)")
	fs.StringVar(&c.certKey, "tls-key", "", "the certificate's private key `FILE`")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case len(c.keys) == 0:
		return config{}, errors.New("no -key given")
	case (c.cert == "") != (c.certKey == ""):
		return config{}, errors.New("-tls-cert and -tls-key go together")
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
		err = serve(c, ln, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keydirectory:", err)
		os.Exit(1)
	}
}

// serve serves the directory of c's keys on ln until the server fails,
// saying what it publishes on out.
func serve(c config, ln net.Listener, out io.Writer) error {
	d, err := botauth.NewDirectory(c.keys)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	for _, k := range c.keys {
		fmt.Fprintf(out, "publishing key %s\n", k.Thumbprint())
	}
	if c.cert != "" {
		fmt.Fprintf(out, "serving https://%s%s\n", ln.Addr(), botauth.DirectoryPath)
		return srv.ServeTLS(ln, c.cert, c.certKey)
	}
	fmt.Fprintf(out, "serving http://%s%s (put TLS in front of it)\n", ln.Addr(), botauth.DirectoryPath)
	return srv.Serve(ln)
}
