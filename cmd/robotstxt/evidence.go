package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/politecrawl/robots/botauth"
	usagepkg "github.com/politecrawl/robots/usage"
)

const evidenceSynopsis = "verify [-key FILE | -directory URL] LOG"

const evidenceAbout = `Checks a usage log (examples/crawl -evidence, the plugin's usage log):
that each record chains to the one before (its prev is the SHA-256 of the
line before), that the log ends with its closing record, and, with -key or
-directory, that every record is signed by that key (a directory is used
only if it is signed by a key it lists, as Web Bot Auth asks: its keys are
those that signed it). Prints "LOG: N records
intact" (and the key IDs) and exits 0; exits 1 naming the first bad record
("record 7: its signature does not verify ..."), 2 on a usage or I/O error.
A signed log needs -key or -directory; with either, an unsigned record is
bad.`

// keyClient fetches -directory (the directory's own signature checked); tests
// replace it.
var keyClient = &http.Client{Timeout: 30 * time.Second}

// maxKeyBytes bounds a key file and a key directory.
const maxKeyBytes = 1 << 20

func evidenceCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("evidence", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keyFile := fs.String("key", "", "the signing key's public or private key `FILE` (PEM, JWK, or a JWK Set)")
	dir := fs.String("directory", "", "the https `URL` of the crawler's key directory: keys are found by their keyid")
	help := func() {
		fmt.Fprintf(stdout, "usage: robotstxt evidence %s\n\n%s\n\n", evidenceSynopsis, evidenceAbout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			help()
			return 0, nil
		}
		return 2, fmt.Errorf("%w: evidence: the subcommand is verify", errUsage)
	}
	pos, isHelp, err := parseArgs(fs, args[1:])
	if isHelp {
		help()
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if len(pos) != 1 {
		return 2, fmt.Errorf("%w: evidence verify takes one LOG", errUsage)
	}
	if *keyFile != "" && *dir != "" {
		return 2, fmt.Errorf("%w: evidence verify: -key or -directory, not both", errUsage)
	}
	var keys map[string]ed25519.PublicKey
	switch {
	case *keyFile != "":
		data, err := readLimited(*keyFile)
		if err != nil {
			return 2, fmt.Errorf("-key: %w", err)
		}
		if keys, err = parseKeys(data); err != nil {
			return 2, fmt.Errorf("-key %s: %w", *keyFile, err)
		}
	case *dir != "":
		if keys, err = botauth.FetchDirectory(context.Background(), keyClient, *dir); err != nil {
			return 2, fmt.Errorf("-directory: %w", err)
		}
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return 2, err
	}
	defer f.Close()
	var lookup usagepkg.LogKeys
	used := map[string]bool{}
	if keys != nil {
		lookup = func(kid string) (ed25519.PublicKey, error) {
			pub, ok := keys[kid]
			if !ok {
				return nil, fmt.Errorf("not among the keys given (%d)", len(keys))
			}
			used[kid] = true
			return pub, nil
		}
	}
	n, err := usagepkg.VerifyLog(f, lookup)
	if err != nil {
		var le *usagepkg.LogError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "robotstxt: %s: %v\n", pos[0], err)
			return 1, nil
		}
		return 2, fmt.Errorf("%s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "%s: %d records intact", pos[0], n)
	for _, kid := range slices.Sorted(maps.Keys(used)) {
		fmt.Fprintf(stdout, ", signed by %s", kid)
	}
	fmt.Fprintln(stdout)
	return 0, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err == nil && len(data) > maxKeyBytes {
		err = fmt.Errorf("%s is over %d bytes", path, maxKeyBytes)
	}
	return data, err
}

// parseKeys reads Ed25519 keys by their key ID (the JWK thumbprint): a
// PEM public or private key, a JWK (public or private), or a JWK Set.
func parseKeys(data []byte) (map[string]ed25519.PublicKey, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var set struct {
			Keys []json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(data, &set); err != nil {
			return nil, fmt.Errorf("JWK: %w", err)
		}
		if set.Keys == nil {
			set.Keys = []json.RawMessage{data}
		}
		keys := map[string]ed25519.PublicKey{}
		for _, raw := range set.Keys {
			var j struct{ Kty, Crv, X, D string }
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, fmt.Errorf("JWK: %w", err)
			}
			if j.Kty != "OKP" || j.Crv != "Ed25519" {
				continue
			}
			if j.D != "" {
				k, err := botauth.ParseKey(raw)
				if err != nil {
					return nil, err
				}
				keys[k.Thumbprint()] = k.CryptoSigner().Public().(ed25519.PublicKey)
				continue
			}
			x, err := base64.RawURLEncoding.DecodeString(j.X)
			if err != nil || len(x) != ed25519.PublicKeySize {
				return nil, errors.New(`JWK "x" is not a base64url Ed25519 public key`)
			}
			keys[thumbprint(x)] = x
		}
		if len(keys) == 0 {
			return nil, errors.New("no Ed25519 key (kty OKP, crv Ed25519)")
		}
		return keys, nil
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("neither a PEM block nor a JWK")
	}
	if block.Type != "PUBLIC KEY" {
		k, err := botauth.ParseKey(data)
		if err != nil {
			return nil, err
		}
		return map[string]ed25519.PublicKey{k.Thumbprint(): k.CryptoSigner().Public().(ed25519.PublicKey)}, nil
	}
	pk, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := pk.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T; want Ed25519", pk)
	}
	return map[string]ed25519.PublicKey{thumbprint(pub): pub}, nil
}

// thumbprint is the RFC 7638 JWK SHA-256 thumbprint of an Ed25519 public
// key: the keyid of its signatures.
func thumbprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
