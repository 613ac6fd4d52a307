package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// stdioConn is a stdio server: its process, started by Zero, and mcp-go's
// transport over its pipes, reading its stdout through a lineLimit (mcp-go
// would read a line of any length). Close ends the process too.
type stdioConn struct {
	*transport.Stdio
	cmd    *exec.Cmd
	stdout *os.File // Zero's end of the server's stdout
	lines  *lineLimit
	stderr *tail
	exited chan struct{} // closed once the process is waited for
	// wrap wraps mcp-go's handler of the server's requests (see
	// Pool.serverRequests).
	wrap func(transport.RequestHandler) transport.RequestHandler

	mu    sync.Mutex
	gone  error       // why the connection ended, once it did
	lost  func(error) // told gone
	close sync.Once
}

// Grace periods of Close: for the server to end once its stdin is closed,
// then once it is sent SIGTERM, then once killed.
const (
	closeGrace = 2 * time.Second
	termGrace  = 2 * time.Second
	killGrace  = 3 * time.Second
)

// startStdio starts a stdio server (not tied to a context: it outlives
// the call that started it) and the transport over its pipes. The raw
// schemas of its questions are kept in sc (when not nil), and wrap wraps
// the handler of its requests.
func startStdio(s Server, env []string, logger *slog.Logger, sc *schemas, wrap func(transport.RequestHandler) transport.RequestHandler) (*stdioConn, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env, cmd.Dir = env, s.Dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Zero's own pipe for stdout, so that Wait does not close it under
	// mcp-go's reader before it read the last answer.
	r, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	// stderr is copied into a bounded tail as it comes (the copying is
	// exec's), so the server never blocks on a full pipe. WaitDelay ends
	// the copying if a child of the server keeps the pipe open.
	c := &stdioConn{cmd: cmd, stdout: r, stderr: &tail{}, exited: make(chan struct{}), wrap: wrap}
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = w, c.stderr, time.Second
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	c.lines = &lineLimit{r: r, max: MaxMessage, ended: func(err error) { c.end(fmt.Errorf("reading the server: %w", err)) }}
	if sc != nil {
		c.lines.tap = &lineTap{to: sc}
	}
	c.Stdio = transport.NewIO(c.lines, stdin, nil)
	transport.WithCommandLogger(logger)(c.Stdio)
	go func() {
		err := cmd.Wait()
		close(c.exited)
		if err == nil {
			err = errors.New("exit status 0")
		}
		c.end(fmt.Errorf("the server exited: %w", err))
	}()
	return c, nil
}

// end records that the connection ended, telling the handler if set.
func (c *stdioConn) end(why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone != nil {
		return
	}
	c.gone = why
	if c.lost != nil {
		go c.lost(why)
	}
}

// SetRequestHandler is how the client's handler of the server's requests
// reaches mcp-go's transport, wrapped. Over stdio mcp-go runs it with no
// deadline of its own, so a question may wait for the person there.
func (c *stdioConn) SetRequestHandler(h transport.RequestHandler) {
	if c.wrap != nil {
		h = c.wrap(h)
	}
	c.Stdio.SetRequestHandler(h)
}

// SetConnectionLostHandler is how the client's OnConnectionLost reaches a
// stdio server: h is told when it exits or its stdout ends or fails.
func (c *stdioConn) SetConnectionLostHandler(h func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = h
	if c.gone != nil {
		go h(c.gone)
	}
}

// SendRequest fails with ErrMessageTooLarge when the server's stdout was
// refused while the request waited (its answer, or another message, was
// over MaxMessage), and with transport.ErrTransportClosed when that was
// before: then the request is not the one the server flooded.
//
// A request not written because the connection had ended is errNotSent:
// only then may the call be sent again on a fresh start (an
// ErrTransportClosed after the write may come after the server got it).
func (c *stdioConn) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if c.lines.over.Load() {
		return nil, fmt.Errorf("%w (%w)", errNotSent, transport.ErrTransportClosed)
	}
	c.mu.Lock()
	gone := c.gone
	c.mu.Unlock()
	if gone != nil {
		return nil, fmt.Errorf("%w: %v", errNotSent, gone)
	}
	res, err := c.Stdio.SendRequest(ctx, req)
	if err != nil && c.lines.over.Load() {
		return nil, ErrMessageTooLarge
	}
	return res, err
}

// Close closes the transport and ends the server: its stdin is closed,
// which ends a server that behaves; one that does not is sent SIGTERM,
// then killed. The process is always waited for.
func (c *stdioConn) Close() error {
	c.close.Do(func() {
		_ = c.Stdio.Close() // closes stdin
		if c.lines.over.Load() {
			// Nothing reads it any more: a server still writing gets EPIPE.
			c.stdout.Close()
		}
		if !c.wait(closeGrace) {
			if c.cmd.Process.Signal(syscall.SIGTERM) != nil || !c.wait(termGrace) {
				_ = c.cmd.Process.Kill()
				c.wait(killGrace)
			}
		}
		// Also ends mcp-go's reader if a child of the server holds stdout.
		c.stdout.Close()
	})
	return nil
}

func (c *stdioConn) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// stderrText is the end of what the server printed on stderr.
func (c *stdioConn) stderrText() string { return c.stderr.String() }

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > tailSize {
		p = p[len(p)-tailSize:]
	}
	t.b = append(t.b, p...)
	if over := len(t.b) - tailSize; over > 0 {
		t.b = t.b[:copy(t.b, t.b[over:])]
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
