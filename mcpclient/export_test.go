package mcpclient

// Clock is the time a pool's calls' timeouts count, for tests.
type Clock = clock

// SetClock makes p count its calls' timeouts on c; before p starts a server.
func SetClock(p *Pool, c Clock) { p.clock = c }

// OnMCPGoHandlerDone has f called whenever mcp-go's own handling of a
// server's question over HTTP has ended (its 30-second context is over);
// before p starts a server.
func OnMCPGoHandlerDone(p *Pool, f func()) { p.requestDone = f }
