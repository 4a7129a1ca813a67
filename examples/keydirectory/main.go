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
// members bound when it signs and how long it is published; with
// -one-signature the response carries one signature, by the newest key in
// force, for verifiers that refuse two (Cloudflare's web-bot-auth 0.1.3).
// Verifiers fetch the directory over HTTPS only: give -tls-cert and
// -tls-key, or serve it behind a proxy that terminates TLS for the host
// named in the crawler's Signature-Agent.
//
// -url is the directory's public URL, the crawler's Signature-Agent
// (default: http or https://ADDR/.well-known/http-message-signatures-directory
// of the listening address). The directory answers at its path and signs
// only for its host: a request naming another Host gets 421 Misdirected
// Request.
//
// -card FILE serves the Signature Agent Card in FILE (a JSON object, as
// examples/crawl -write-card writes it) at -card-path (default
// /signature-agent-card.json), as application/json.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/politecrawl/robots/botauth"
)

// config is what the command line asks for.
type config struct {
	addr, cert, certKey string
	url                 string
	oneSignature        bool
	card                []byte // the Signature Agent Card served, nil for none
	cardPath            string
	keys                []botauth.Key
}

// maxCard bounds the card file: a card is a few hundred bytes.
const maxCard = 64 << 10

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
	fs.StringVar(&c.url, "url", "", "the directory's public `URL`, the crawler's Signature-Agent (default: of -addr)")
	fs.BoolVar(&c.oneSignature, "one-signature", false, "sign the response with the newest key in force only")
	cardFile := fs.String("card", "", "serve the Signature Agent Card in `FILE` (JSON) at -card-path")
	fs.StringVar(&c.cardPath, "card-path", "/signature-agent-card.json", "the `PATH` of the card")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if *cardFile != "" {
		card, err := readCard(*cardFile)
		if err != nil {
			return config{}, err
		}
		c.card = card
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case len(c.keys) == 0:
		return config{}, errors.New("no -key given")
	case (c.cert == "") != (c.certKey == ""):
		return config{}, errors.New("-tls-cert and -tls-key go together")
	case !strings.HasPrefix(c.cardPath, "/") || c.cardPath == botauth.DirectoryPath:
		return config{}, fmt.Errorf("-card-path %q: want an absolute path other than the directory's", c.cardPath)
	}
	return c, nil
}

// readCard reads a card file: a JSON object of at most maxCard bytes.
func readCard(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-card: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCard+1))
	if err != nil {
		return nil, fmt.Errorf("-card: %w", err)
	}
	var obj map[string]any
	if len(b) > maxCard || json.Unmarshal(b, &obj) != nil {
		return nil, fmt.Errorf("-card: %s is not a JSON object of at most %d bytes", path, maxCard)
	}
	return b, nil
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
	scheme := "http"
	if c.cert != "" {
		scheme = "https"
	}
	u := c.url
	if u == "" {
		u = scheme + "://" + ln.Addr().String() + botauth.DirectoryPath
	}
	var opts []botauth.Option
	if c.oneSignature {
		opts = append(opts, botauth.OneSignature())
	}
	d, err := botauth.NewDirectory(u, c.keys, opts...)
	if err != nil {
		return err
	}
	var h http.Handler = d
	if c.card != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != c.cardPath {
				d.ServeHTTP(w, r)
				return
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(c.card)
		})
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	for _, k := range c.keys {
		fmt.Fprintf(out, "publishing key %s\n", k.Thumbprint())
	}
	tls := ""
	if c.cert == "" {
		tls = " (put TLS in front of it)"
	}
	fmt.Fprintf(out, "serving %s on %s://%s%s\n", u, scheme, ln.Addr(), tls)
	if c.card != nil {
		fmt.Fprintf(out, "serving the card at %s\n", c.cardPath)
	}
	if c.cert != "" {
		return srv.ServeTLS(ln, c.cert, c.certKey)
	}
	return srv.Serve(ln)
}
