package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a local Redis Cluster of masters without replicas, each a
// [Server] started with --cluster-enabled yes, the slots spread evenly
// (redis-cli --cluster create).
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts a Cluster of n masters (at least 3, as Redis
// requires) for t, and waits until every node reports cluster_state:ok. The
// nodes are stopped and their directories removed when t ends. It skips t
// when redis-server or redis-cli is not installed, or fails it under
// CI=true.
//
// A node also listens on its port + 10000 (the cluster bus), so every port
// is chosen with both free, below the kernel's ephemeral range.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 3 {
		t.Fatalf("redistest: a Cluster needs at least 3 masters, not %d", n)
	}
	bin := Binary()
	cli := ""
	if bin != "" {
		if p := filepath.Join(filepath.Dir(bin), "redis-cli"); fileExists(p) {
			cli = p
		} else if p, err := exec.LookPath("redis-cli"); err == nil {
			cli = p
		}
	}
	if bin == "" || cli == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("redistest: redis-server or redis-cli is not installed (CI=true: a missing Redis is a failure; apt-get install -y redis-server)")
		}
		t.Skip("redistest: redis-server or redis-cli is not installed (apt-get install -y redis-server)")
	}
	c := &Cluster{}
	for range n {
		s := &Server{bin: bin, dir: t.TempDir()}
		var err error
		for attempt := 0; attempt < 10; attempt++ {
			var port int
			if port, err = clusterPort(); err != nil {
				continue
			}
			s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			s.extra = []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
				"--cluster-node-timeout", "5000", "--cluster-require-full-coverage", "yes"}
			if err = s.Start(); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("redistest: cluster node: %v", err)
		}
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

// Addrs returns the nodes' host:port addresses.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, s := range c.Nodes {
		a = append(a, s.Addr)
	}
	return a
}

// URL returns the Cluster in go-redis's cluster URL form
// (redis.ParseClusterURL): redis://first?addr=second&addr=third.
func (c *Cluster) URL() string {
	a := c.Addrs()
	u := "redis://" + a[0]
	for i, x := range a[1:] {
		if i == 0 {
			u += "?"
		} else {
			u += "&"
		}
		u += "addr=" + x
	}
	return u
}

// clusterPort returns a loopback port that is free, with port + 10000
// free too, both below the kernel's ephemeral range when it is known.
func clusterPort() (int, error) {
	hi := 65535 - 10000
	if lo := ephemeralLow(); lo > 20000+1000 {
		hi = lo - 10000
	}
	for range 100 {
		port := 10000 + rand.IntN(hi-10000)
		ok := true
		for _, p := range []int{port, port + 10000} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return port, nil
		}
	}
	return 0, errors.New("redistest: no free port pair (port, port + 10000) found")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Do sends one command to addr and returns its reply as text (a status,
// an integer, a bulk string), in under a second; an error reply is an
// error. It is for setting up servers, not for the code under test.
func Do(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", errors.New("redistest: empty reply")
	case line[0] == '-':
		return "", errors.New(line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line[1:], nil
}

// Pause stops every node with SIGSTOP (see [Server.Pause]).
func (c *Cluster) Pause() error {
	for _, s := range c.Nodes {
		if err := s.Pause(); err != nil {
			return err
		}
	}
	return nil
}

// Resume continues every node (SIGCONT).
func (c *Cluster) Resume() error {
	for _, s := range c.Nodes {
		if err := s.Resume(); err != nil {
			return err
		}
	}
	return nil
}

// Stop kills every node (SIGKILL, as a crash would).
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// Start starts every stopped node again on its port, empty (nothing
// persists but each node's cluster configuration: it owns the same
// slots), and waits until every node reports cluster_state:ok.
func (c *Cluster) Start() error {
	for _, s := range c.Nodes {
		s.mu.Lock()
		running := s.cmd != nil
		s.mu.Unlock()
		if running {
			continue
		}
		if err := s.Start(); err != nil {
			return err
		}
	}
	return c.waitOK(30 * time.Second)
}

// waitOK waits until every node reports cluster_state:ok.
func (c *Cluster) waitOK(d time.Duration) error {
	deadline := time.Now().Add(d)
	for _, s := range c.Nodes {
		for {
			info, err := Do(s.Addr, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("redistest: node %s not ok within %v: %q, %v", s.Addr, d, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// CPU returns the CPU time the Redis at addr has used so far, in seconds
// (INFO cpu: used_cpu_sys + used_cpu_user, its main thread and the
// others), failing t if it cannot be read. Benchmarks take the
// difference over a run.
func CPU(t testing.TB, addr string) float64 {
	t.Helper()
	info, err := Do(addr, "INFO", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			x, _ := strconv.ParseFloat(v, 64)
			s += x
		}
	}
	return s
}
