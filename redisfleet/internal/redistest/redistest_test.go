package redistest

import "testing"

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
