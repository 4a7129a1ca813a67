package main

import (
	"fmt"
	"path/filepath"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/usage"
)

// openEvidence opens the usage log at path, signed with the key in
// keyFile unless it is "", keeping the documents that decided beside it.
func openEvidence(path, keyFile string) (*usage.Log, error) {
	cfg := usage.LogConfig{Documents: filepath.Dir(path)}
	if keyFile != "" {
		key, err := botauth.LoadKey(keyFile)
		if err != nil {
			return nil, fmt.Errorf("-sign-key: %w", err)
		}
		cfg.Key, cfg.KeyID = key.CryptoSigner(), key.Thumbprint()
	}
	l, err := usage.OpenLog(path, cfg)
	if err != nil {
		return nil, fmt.Errorf("-evidence: %w", err)
	}
	return l, nil
}
