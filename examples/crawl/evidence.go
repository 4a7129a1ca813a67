package main

import (
	"fmt"

	"github.com/politecrawl/robots/botauth"
	usagelog "github.com/politecrawl/robots/usage"
)

// openEvidence opens the usage log at path, signed with the key in
// keyFile unless it is "".
func openEvidence(path, keyFile string) (*usagelog.Log, error) {
	cfg := usagelog.LogConfig{}
	if keyFile != "" {
		key, err := botauth.LoadKey(keyFile)
		if err != nil {
			return nil, fmt.Errorf("-sign-key: %w", err)
		}
		cfg.Key, cfg.KeyID = key.CryptoSigner(), key.Thumbprint()
	}
	l, err := usagelog.OpenLog(path, cfg)
	if err != nil {
		return nil, fmt.Errorf("-evidence: %w", err)
	}
	return l, nil
}
