package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
)

// ListenLoopback listens on addr if it is a loopback address: the HTTP
// face runs commands on this machine and must not be reachable from others.
func ListenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want host:port, e.g. 127.0.0.1:7777", addr)
	}
	if host == "localhost" {
		host = "127.0.0.1"
		_, port, _ := net.SplitHostPort(addr)
		addr = net.JoinHostPort(host, port)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--http %q: only a loopback address (127.0.0.1, ::1) is allowed", addr)
	}
	return net.Listen("tcp", addr)
}

// NewToken is a bearer token for the HTTP face: 24 random bytes, in hex.
func NewToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
