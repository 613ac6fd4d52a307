package lsp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/vision"
)

// attachmentParams is one picture of zero/prompt's (and zero/intervene's)
// attachments: its bytes in base64 (data, with the name and the MIME type
// the client claims, which the bytes overrule), or a path in the
// session's workspace that the server reads.
type attachmentParams struct {
	Name     string  `json:"name,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
	Data     *string `json:"data,omitempty"`
	Path     *string `json:"path,omitempty"`
}

// maxDataLen is the longest base64 text of an attachment's data: that of
// vision.MaxSourceBytes, with room for the line breaks some encoders put
// in. Longer data is refused before it is decoded.
var maxDataLen = base64.StdEncoding.EncodedLen(vision.MaxSourceBytes) + 4096

// input makes the user message of a prompt: its text and its attachments,
// each read (data decoded, a path read through the session's roots),
// checked, scaled down and re-encoded by server.Attach. An attachment
// Zero cannot take is an ErrInvalidParams that names it and says why;
// then nothing is sent. This runs on the read loop, in order with the
// client's other requests: decoding is bounded by the frame size
// (maxFrame) and vision's own limits.
func input(text string, atts []attachmentParams, roots []string, prefix string) (loop.Input, error) {
	if len(atts) > loop.MaxInputImages {
		return loop.Input{}, invalidParams(prefix+"attachments", "%d attachments, at most %d in one message", len(atts), loop.MaxInputImages)
	}
	in := loop.Input{Text: text}
	for i, a := range atts {
		field := fmt.Sprintf("%sattachments[%d]", prefix, i)
		att, err := attachment(a, i, roots, field)
		if err != nil {
			return loop.Input{}, err
		}
		// One at a time, so the error names the item as the params do.
		one, err := server.Attach("", []server.Attachment{att})
		if err != nil {
			if !server.IsBadAttachment(err) {
				return loop.Input{}, fmt.Errorf("%s: %w", field, err)
			}
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // "attachment 1 (name): " is said by the field
			}
			return loop.Input{}, invalidParams(field, "%v", err)
		}
		in.Images = append(in.Images, one.Images...)
	}
	return in, nil
}

// attachment reads one attachment's bytes: its data decoded, or the file
// at its path in the workspace.
func attachment(a attachmentParams, i int, roots []string, field string) (server.Attachment, error) {
	switch {
	case a.Data != nil && a.Path != nil:
		return server.Attachment{}, invalidParams(field, "give either data or path, not both")
	case a.Path != nil:
		if strings.TrimSpace(*a.Path) == "" {
			return server.Attachment{}, invalidParams(field+".path", "empty")
		}
		att, err := server.AttachFile(roots, *a.Path)
		if err != nil {
			return server.Attachment{}, invalidParams(field+".path", "%v", err)
		}
		if a.Name != "" {
			att.Name = a.Name
		}
		att.MIME = a.MimeType
		return att, nil
	case a.Data != nil:
		name := a.Name
		if name == "" {
			name = fmt.Sprintf("image %d", i+1)
		}
		data, mime, err := decodeData(*a.Data, a.MimeType)
		if err != nil {
			return server.Attachment{}, invalidParams(field+".data", "%s: %v", name, err)
		}
		return server.Attachment{Name: name, MIME: mime, Data: data}, nil
	}
	return server.Attachment{}, invalidParams(field, "needs data (the picture in base64) or path (a file in the workspace)")
}

// decodeData decodes an attachment's base64 data, bounded before it is
// decoded. A data: URL is taken too (its type when mime is empty).
func decodeData(data, mime string) ([]byte, string, error) {
	if rest, ok := strings.CutPrefix(data, "data:"); ok {
		typ, payload, found := strings.Cut(rest, ";base64,")
		if !found {
			return nil, mime, errors.New("a data: URL that is not base64")
		}
		data = payload
		if mime == "" {
			mime = typ
		}
	}
	if len(data) > maxDataLen {
		return nil, mime, fmt.Errorf("%w: %d bytes of base64 hold more than the %d MiB a picture may have", vision.ErrTooLarge,
			len(data), vision.MaxSourceBytes>>20)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, mime, fmt.Errorf("not base64 (%v)", err)
	}
	if len(raw) == 0 {
		return nil, mime, errors.New("empty")
	}
	return raw, mime, nil
}

// imageParams are zero/image's params.
type imageParams struct {
	SessionID *string `json:"sessionId"`
	SHA256    *string `json:"sha256"`
}

// imageResult is zero/image's result: a picture an event names, with its
// data in base64.
type imageResult struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Name     string `json:"name,omitempty"`
}

// image answers a picture of a session's messages (a user's attachment, a
// tool result's image) by the sha256 its events name it by, so a client
// shows what the events only refer to, in a replay too.
func (c *conn) image(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p imageParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.SHA256 == nil || *p.SHA256 == "" {
		return continuation{}, invalidParams("sha256", "required")
	}
	hash := strings.ToLower(*p.SHA256)
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return continuation{}, invalidParams("sha256", "not a SHA-256 in hex (64 hex digits): %q", *p.SHA256)
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	im, ok := sess.Image(hash)
	if !ok || len(im.Data) == 0 {
		return continuation{}, fmt.Errorf("zero/image: %w: session %s has no image %s (it may have been left out of a compressed history)", server.ErrNotFound, sess.ID(), hash)
	}
	return done(imageResult{MimeType: im.MIME, Data: base64.StdEncoding.EncodeToString(im.Data),
		Width: im.Width, Height: im.Height, Name: im.Name}), nil
}
