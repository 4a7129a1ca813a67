// Package redistest starts real redis-server processes for tests: each on a
// free loopback port, with no persistence, in a temporary directory, stopped
// when the test ends. No system service is needed, only the redis-server
// binary (Debian's package redis-server; .ci/run installs it).
//
// Without the binary a test is skipped, except under CI=true, where it
// fails: CI must never pass by skipping the fleet tests.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process. Stop and Start may be called to kill
// it and bring it back on the same port (empty: nothing persists).
type Server struct {
	Addr string // host:port on loopback
	Port int

	bin, dir string
	extra    []string // more redis-server arguments (cluster mode)
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
}

// Binary returns the path of redis-server, or "" when none is installed.
func Binary() string {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a redis-server for t and stops it when t ends, with more
// redis-server arguments if given ("--maxmemory-policy", "allkeys-lru").
// It skips t when redis-server is not installed, or fails it under
// CI=true.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("redistest: redis-server is not installed (CI=true: a missing Redis is a failure; apt-get install -y redis-server)")
		}
		t.Skip("redistest: redis-server is not installed (apt-get install -y redis-server)")
	}
	s := &Server{bin: bin, dir: t.TempDir(), extra: args}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var port int
		port, err = freePort()
		if err != nil {
			break
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = s.Start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's address as a redis:// URL for database 0.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Start (re)starts the server on its port; it is an error if it runs.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redistest: the server runs already")
	}
	args := append([]string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"}, s.extra...)
	cmd := exec.Command(s.bin, args...)
	logf, err := os.Create(filepath.Join(s.dir, "redis-"+strconv.Itoa(s.Port)+".log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("redistest: starting %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if Ping(s.Addr) == nil {
			// The port may be another server's (a server of another test
			// that took it while this one was stopped, or the reverse):
			// this one then failed to bind it and exits.
			if err := answersAs(s.Addr, cmd.Process.Pid); err != nil {
				cmd.Process.Kill()
				<-done
				return fmt.Errorf("redistest: port %d: %w", s.Port, err)
			}
			s.cmd, s.done = cmd, done
			return nil
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("redistest: redis-server on port %d exited: %s", s.Port, strings.TrimSpace(string(b)))
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("redistest: redis-server on port %d did not answer PING within 10 s", s.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (SIGKILL: as a crash would) and waits for it to
// exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

// Pause stops the server with SIGSTOP, as a Redis that hangs (a long
// fork, a stalled disk, a VM paused): connections stay open and commands
// sent meanwhile wait in its sockets, to run when [Server.Resume] sends
// SIGCONT. Resume is also registered to run when the test ends.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a server stopped by [Server.Pause] (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("redistest: the server does not run")
	}
	return s.cmd.Process.Signal(sig)
}

// Ping sends PING to addr and reads the answer, in under a second.
func Ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("redistest: PING answered %q", line)
	}
	return nil
}

// answersAs checks that the server answering at addr is the process pid
// (INFO server's process_id).
func answersAs(addr string, pid int) error {
	info, err := Do(addr, "INFO", "server")
	if err != nil {
		return err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			if v != strconv.Itoa(pid) {
				return fmt.Errorf("answered by another redis-server (pid %s, not %d)", v, pid)
			}
			return nil
		}
	}
	return errors.New("INFO server has no process_id")
}

// freePort returns a loopback port nothing listens on now, chosen at
// random below the kernel's ephemeral range when it can: a server stopped
// and started again on its port (Stop, Start) must find it free, so the
// port must not be handed out meanwhile to another test's server (as
// port 0 would) nor to a client connection's local end.
func freePort() (int, error) {
	if lo := ephemeralLow(); lo > 20000 {
		for range 50 {
			port := 10000 + rand.IntN(lo-10000)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the lowest port of Linux's ephemeral range, or 0 when
// unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}

// DeadAddr returns a loopback address nothing listens on: a port that was
// free a moment ago, its listener closed.
func DeadAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
