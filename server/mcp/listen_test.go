package mcp

import (
	"strings"
	"testing"
)

func TestListenLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		ln, err := ListenLoopback(addr)
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "cannot assign") {
				continue // no IPv6 loopback on this machine
			}
			t.Errorf("ListenLoopback(%q): %v", addr, err)
			continue
		}
		ln.Close()
	}
	for _, addr := range []string{"0.0.0.0:7777", ":7777", "192.168.1.5:7777", "example.com:80", "7777"} {
		if ln, err := ListenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("ListenLoopback(%q) accepted a non-loopback address", addr)
		}
	}
}
