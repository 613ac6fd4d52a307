package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrBlockedAddress means a fetch would have connected to an address that
// is not public: loopback, private, link-local (cloud metadata endpoints
// live there), unspecified, multicast or reserved. Zero fetches in its own
// process on the host, outside the sandbox, so a URL the model chose must
// not reach the host's own services or its network's.
var ErrBlockedAddress = errors.New("address is not public")

// errTooLarge is wrapped by fetch for a body over its limit.
var errTooLarge = errors.New("too large")

// Fetch limits.
const (
	fetchMaxRedirects = 5
	fetchUserAgent    = "Mozilla/5.0 (compatible; Zero document_query)"
)

// nonPublic are the ranges PublicAddress refuses beyond the ones netip
// classifies (loopback, private, link-local, multicast, unspecified).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT; Alibaba's metadata service is 100.100.100.200
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an IPv4 address
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated, still routed by some)
}

// Prefixes whose addresses carry an IPv4 address that is what is reached.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// PublicAddress reports whether a is a public unicast address, one a fetch
// on the model's behalf may connect to. IPv4-mapped IPv6 addresses are
// judged as the IPv4 address they map, and so are NAT64 and 6to4
// addresses, which reach the IPv4 address they embed.
func PublicAddress(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a):
			return PublicAddress(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return PublicAddress(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return true
}

// addressKind names why a is not public, for messages.
func addressKind(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link-local, where cloud metadata services answer"
	case a.IsPrivate():
		return "private"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	}
	return "reserved or not routable"
}

// blockedError is the error a guarded dial returns.
type blockedError struct{ addr netip.Addr }

func (e *blockedError) Error() string {
	return fmt.Sprintf("%s: %s is %s", ErrBlockedAddress, e.addr, addressKind(e.addr))
}

func (e *blockedError) Unwrap() error { return ErrBlockedAddress }

// addrGuard decides which addresses a fetch may connect to: public ones,
// and the non-public ones the user allowed.
type addrGuard struct {
	all  bool           // any address (AllowPrivate)
	nets []netip.Prefix // non-public networks allowed anyway
}

func (g addrGuard) allowed(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if g.all || PublicAddress(a) {
		return true
	}
	for _, p := range g.nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// control is a net.Dialer Control: it runs for every socket the transport
// connects, before the connection is made, with the address actually
// dialled. So a name that resolves (or re-resolves: DNS rebinding) to a
// private address and a redirect to one are refused alike, and no packet
// reaches them.
func (g addrGuard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrBlockedAddress, address)
	}
	if !g.allowed(ap.Addr()) {
		return &blockedError{ap.Addr().Unmap().WithZone("")}
	}
	return nil
}

// fetcher gets documents over HTTP(S) for the model. It never uses a proxy:
// a proxy would connect on its behalf, past the address check.
type fetcher struct {
	client   *http.Client
	guard    addrGuard
	timeout  time.Duration
	maxBytes int64
}

func newFetcher(guard addrGuard, timeout time.Duration, maxBytes int64) *fetcher {
	dialer := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second, Control: guard.control}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    15 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= fetchMaxRedirects {
				return fmt.Errorf("stopped after %d redirects", fetchMaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirected to a %s: URL, which is not fetched", req.URL.Scheme)
			}
			return nil
		},
	}
	return &fetcher{client: client, guard: guard, timeout: timeout, maxBytes: maxBytes}
}

// fetched is a document got over HTTP.
type fetched struct {
	body        []byte
	contentType string // the media type, lower case, without parameters
	url         string // after redirects
}

// fetch GETs u (http or https) within the fetcher's timeout and size
// limit. Its errors are worded for the model.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (*fetched, error) {
	// The dial check is the guard; this one only spares a literal address
	// the attempt.
	if a, err := netip.ParseAddr(u.Hostname()); err == nil && !f.guard.allowed(a) {
		return nil, &blockedError{a.Unmap().WithZone("")}
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", fetchUserAgent)
	req.Header.Set("Accept", "text/html, application/xhtml+xml, application/pdf, text/markdown, text/plain;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fetchError(ctx, f.timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("the server answered HTTP %s", resp.Status)
	}
	if resp.ContentLength > f.maxBytes {
		return nil, fmt.Errorf("%w: the document is %d bytes, over the %d MiB limit", errTooLarge, resp.ContentLength, f.maxBytes>>20)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return nil, fetchError(ctx, f.timeout, err)
	}
	if int64(len(body)) > f.maxBytes {
		return nil, fmt.Errorf("%w: the document is over the %d MiB limit", errTooLarge, f.maxBytes>>20)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		mt = ""
	}
	return &fetched{body: body, contentType: strings.ToLower(mt), url: resp.Request.URL.String()}, nil
}

// fetchError words a failed request for the model.
func fetchError(ctx context.Context, timeout time.Duration, err error) error {
	var be *blockedError
	switch {
	case errors.As(err, &be):
		target := ""
		var ue *url.Error
		if errors.As(err, &ue) {
			target = " (" + ue.URL + ")"
		}
		return fmt.Errorf("%w%s", be, target)
	case errors.Is(err, ErrBlockedAddress):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no complete answer within %s", timeout)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err // the URL is in the message already
	}
	return err
}

// documentName is the name the document package judges a fetched body by:
// its media type when it tells the kind, else the URL's last path segment
// (its extension, or a sniff of the content).
func documentName(f *fetched) string {
	ext := ""
	switch ct := f.contentType; {
	case ct == "text/html", ct == "application/xhtml+xml":
		ext = ".html"
	case ct == "application/pdf", ct == "application/x-pdf":
		ext = ".pdf"
	case ct == "text/markdown", ct == "text/x-markdown":
		ext = ".md"
	case ct == "text/plain":
		ext = ".txt"
	case ct == "text/csv":
		ext = ".csv"
	case ct == "application/json", strings.HasSuffix(ct, "+json"):
		ext = ".json"
	case ct == "application/xml", ct == "text/xml", strings.HasSuffix(ct, "+xml"):
		ext = ".xml"
	}
	name := "document"
	if u, err := url.Parse(f.url); err == nil {
		if i := strings.LastIndexByte(u.Path, '/'); i >= 0 && i < len(u.Path)-1 {
			name = u.Path[i+1:]
		}
	}
	if ext != "" {
		return "document" + ext
	}
	return name
}
