package redistest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// StallProxy forwards TCP to a Redis server until stalled (Stall): then it
// stops passing replies back, as a Redis that hangs would.
type StallProxy struct {
	ln      net.Listener
	stalled atomic.Bool
	mu      sync.Mutex
	conns   []net.Conn
}

// NewStallProxy returns a proxy to upstream, closed when t ends.
func NewStallProxy(t testing.TB, upstream string) *StallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &StallProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go io.Copy(u, c)
			go p.replies(c, u)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *StallProxy) replies(c, u net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := u.Read(buf)
		for p.stalled.Load() {
			time.Sleep(10 * time.Millisecond)
			if _, err := c.Write(nil); err != nil {
				return
			}
		}
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

// Addr is the proxy's address.
func (p *StallProxy) Addr() string { return p.ln.Addr().String() }

// Stall stops (true) or resumes (false) passing replies back.
func (p *StallProxy) Stall(on bool) { p.stalled.Store(on) }
