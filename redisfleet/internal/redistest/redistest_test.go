package redistest

import (
	"strings"
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if err := Ping(s.Addr); err != nil {
		t.Fatalf("a started server does not answer PING: %v", err)
	}
	s.Stop()
	if err := Ping(s.Addr); err == nil {
		t.Fatal("a stopped server still answers PING")
	}
	if err := s.Start(); err != nil {
		t.Fatalf("restart on port %d: %v", s.Port, err)
	}
	if err := Ping(s.Addr); err != nil {
		t.Fatalf("a restarted server does not answer PING: %v", err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("starting a running server is not an error")
	}
}

// TestStartOnTakenPort: a server started on a port another redis-server
// holds is an error, not taken for started because the other answers.
func TestStartOnTakenPort(t *testing.T) {
	t.Parallel()
	a := Start(t)
	b := &Server{bin: a.bin, dir: t.TempDir(), Port: a.Port, Addr: a.Addr}
	if err := b.Start(); err == nil {
		b.Stop()
		t.Fatal("Start on a port another redis-server holds succeeded")
	}
	if err := Ping(a.Addr); err != nil {
		t.Fatalf("the server holding the port: %v", err)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3)
	for _, s := range c.Nodes {
		info, err := Do(s.Addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
			t.Fatalf("%s: %q, %v", s.Addr, info, err)
		}
	}
	// Each node serves a third of the slots: a key lands on one node and
	// the others redirect.
	moved := 0
	for _, s := range c.Nodes {
		if _, err := Do(s.Addr, "SET", "k", "v"); err != nil && strings.HasPrefix(err.Error(), "MOVED") {
			moved++
		}
	}
	if moved != 2 {
		t.Fatalf("%d of 3 nodes redirected a key, want 2", moved)
	}
	// Restarted, the nodes come back empty with their slots.
	if _, err := Do(c.Nodes[0].Addr, "SET", "{a}k", "v"); err != nil && !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatal(err)
	}
	c.Stop()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Nodes {
		if n, err := Do(s.Addr, "DBSIZE"); err != nil || n != "0" {
			t.Fatalf("%s after a restart: DBSIZE %q, %v", s.Addr, n, err)
		}
	}
	if u := c.URL(); !strings.HasPrefix(u, "redis://"+c.Nodes[0].Addr+"?addr=") || strings.Count(u, "addr=") != 2 {
		t.Fatalf("URL %q", u)
	}
}
