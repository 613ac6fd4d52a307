package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/zeroagent/zero/server/jsonline"
)

// MaxLineSize is the longest message (one line of JSON, newline excluded)
// zero acp reads from the client: 64 MiB, room for an editor's answer to
// fs/read_text_file for a file as big as text_editor handles
// (MaxReadTextFile, 32 MiB) with its JSON escaping. Lines over the 10 MiB
// the ACP library reads reach it with their long strings (file text,
// embedded resources) set aside, so a message that long but made of
// countless short values is refused as if it were over the limit. A longer
// line is read past without being kept and answered with a JSON-RPC error;
// the connection goes on:
//   - a request whose id can be found gets an "Invalid request" (-32600)
//     error for that id;
//   - a response to one of zero's own requests (fs/read_text_file) fails
//     that request with an error naming the limit, so the tool that waited
//     for it reports an error instead of hanging;
//   - anything else gets a "Parse error" (-32700) with a null id.
const MaxLineSize = 64 << 20

// sdkScannerMax is the buffer of the bufio.Scanner acp-go-sdk v0.13.5
// reads its input with: on a longer line it closes the connection.
const sdkScannerMax = 10 << 20

// sdkLineLimit is the longest line, newline included, handed to the SDK as
// it is, clear of the scanner's edge. A longer line (up to MaxLineSize)
// reaches the SDK with its long strings set aside (see stash).
const sdkLineLimit = sdkScannerMax - 64<<10

// tooLargeMessage is the message of the error that stands in for a
// response longer than MaxLineSize (fsError recognises it).
const tooLargeMessage = "Message too large"

// inputFilter copies the client's lines to the SDK. It answers the lines
// the SDK would silently drop (text that is not JSON, JSON that is not a
// JSON-RPC message) and the lines it cannot read (too long), and it shrinks
// lines between the SDK's limit and MaxLineSize by setting their long
// strings aside in stash.
type inputFilter struct {
	src   io.Reader
	dst   *io.PipeWriter // the SDK's input
	out   io.Writer      // the client: answers the filter gives itself
	stash *stash
	log   *slog.Logger
}

// run filters until src ends. It closes dst when src ends and returns
// src's error (nil at EOF).
func (f *inputFilter) run() error {
	r := jsonline.NewReader(f.src, MaxLineSize)
	for {
		line, over, err := r.ReadLine()
		var werr error
		switch {
		case over != nil:
			werr = f.refuse(over.Envelope, over.Size, fmt.Sprintf("the message is more than %d bytes (%d MiB), the most zero accepts on one line", MaxLineSize, MaxLineSize>>20))
		case len(bytes.TrimSpace(line)) > 0:
			werr = f.handle(line)
		}
		if werr != nil {
			if errors.Is(werr, io.ErrClosedPipe) {
				return nil // the SDK stopped reading: Serve is ending
			}
			f.dst.CloseWithError(werr)
			return werr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				f.dst.Close()
				return nil
			}
			f.dst.CloseWithError(err)
			return err
		}
	}
}

// handle passes one line (at most MaxLineSize) on, or answers it.
func (f *inputFilter) handle(line []byte) error {
	if len(line)+1 <= sdkLineLimit {
		if reply := checkLine(line); reply != nil {
			_, err := f.out.Write(reply)
			return err
		}
		return f.pass(line)
	}
	// Longer lines go to the SDK with their long strings set aside; the
	// short line left is checked as a short line is (it is valid JSON
	// exactly when the whole line is, every string set aside having been
	// decoded).
	small, keys, ok := f.stash.shrink(line)
	if !ok || !json.Valid(small) {
		f.stash.drop(keys)
		_, err := f.out.Write(rpcErrorLine(-32700, "Parse error", "the line is not valid JSON"))
		return err
	}
	env := jsonline.ScanEnvelope(small)
	if reply := checkEnvelope(env); reply != nil {
		f.stash.drop(keys)
		_, err := f.out.Write(reply)
		return err
	}
	if len(small)+1 > sdkLineLimit {
		f.stash.drop(keys)
		return f.refuse(env, int64(len(line)), fmt.Sprintf("the message is %d bytes and, without its long strings, still more than the %d MiB the ACP library reads on one line", len(line), sdkScannerMax>>20))
	}
	f.log.Debug("acp: a long message reaches the SDK with its long strings set aside", "bytes", len(line), "sent", len(small))
	return f.pass(small)
}

// pass writes a line to the SDK.
func (f *inputFilter) pass(line []byte) error {
	if _, err := f.dst.Write(line); err != nil {
		return err
	}
	_, err := f.dst.Write([]byte{'\n'})
	return err
}

// refuse answers a message zero does not read (n bytes long) as
// MaxLineSize's documentation says.
func (f *inputFilter) refuse(env jsonline.Envelope, n int64, why string) error {
	kind := "unidentified"
	var err error
	switch {
	case env.Kind() == jsonline.Request && env.ID != nil:
		kind = "request"
		_, err = f.out.Write(rpcErrorLineID(env.ID, -32600, "Invalid request", why))
	case env.Kind() == jsonline.Response && env.ID != nil:
		// A response to one of zero's requests: that request must fail,
		// not wait for ever. The SDK gets an error response in its place.
		kind = "response"
		err = f.pass(errorResponse(env.ID, -32600, tooLargeMessage, why))
	default:
		_, err = f.out.Write(rpcErrorLine(-32700, "Parse error", why))
	}
	method := env.Method
	if len(method) > 64 {
		method = method[:64] + "…"
	}
	f.log.Warn("acp: refused a message too long to read", "bytes", n, "kind", kind, "method", method)
	return err
}

// errorResponse is a JSON-RPC error response to id, without a newline.
func errorResponse(id json.RawMessage, code int, message, detail string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message, "data": map[string]any{"error": detail}},
	})
	return b
}

// rpcErrorLineID is a JSON-RPC error response to id, as a line.
func rpcErrorLineID(id json.RawMessage, code int, message, detail string) []byte {
	return append(errorResponse(id, code, message, detail), '\n')
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw json.RawMessage) bool { return jsonline.ValidID(raw) }

// checkEnvelope returns the error line for an envelope the SDK cannot
// handle, as checkLine does for a whole line; nil when it is a JSON-RPC
// message.
func checkEnvelope(e jsonline.Envelope) []byte {
	switch {
	case !e.Object:
		return rpcErrorLine(-32600, "Invalid request", "a message must be a JSON object")
	case !e.HasMethod && !e.HasID:
		return rpcErrorLine(-32600, "Invalid request", "a message needs a method or an id")
	case e.HasMethod && !e.MethodOK:
		return rpcErrorLine(-32600, "Invalid request", "method must be a non-empty string")
	case e.HasID && e.ID == nil:
		return rpcErrorLine(-32600, "Invalid request", "id must be a string, a number or null")
	}
	return nil
}
