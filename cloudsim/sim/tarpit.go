package sim

import (
	"net"
	"sync"
)

// Tarpit is a loopback listener that accepts connections and never reads
// from them or answers: a TLS handshake with it never ends. Tests point a
// client at it to prove the client's timeouts.
type Tarpit struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// NewTarpit listens on a free loopback port.
func NewTarpit() (*Tarpit, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Tarpit{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.mu.Lock()
			t.conns = append(t.conns, c)
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// Addr is the tarpit's host:port.
func (t *Tarpit) Addr() string { return t.ln.Addr().String() }

// Close stops listening and closes every connection it holds.
func (t *Tarpit) Close() error {
	err := t.ln.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		_ = c.Close()
	}
	return err
}
