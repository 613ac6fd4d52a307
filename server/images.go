package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/vision"
)

// Attachment is a picture as a face received it: bytes with the name and
// the MIME type its client claimed (the type is not trusted: the bytes
// say what they are).
type Attachment struct {
	Name string
	MIME string
	Data []byte
}

// Attach makes a user message of text and attachments: each picture
// checked, scaled down and re-encoded by package vision, at most
// loop.MaxInputImages of them. An attachment that is not a picture the
// model can take is an error that names it; nothing is dropped quietly.
func Attach(text string, atts []Attachment) (loop.Input, error) {
	in := loop.Input{Text: text}
	if len(atts) > loop.MaxInputImages {
		return in, fmt.Errorf("%w: %d images attached, at most %d", loop.ErrBadImage, len(atts), loop.MaxInputImages)
	}
	for i, a := range atts {
		im, err := vision.Load(a.Data, a.Name)
		if err != nil {
			return in, fmt.Errorf("attachment %d (%s): %w", i+1, attachmentName(a, i), err)
		}
		in.Images = append(in.Images, im)
	}
	return in, nil
}

func attachmentName(a Attachment, i int) string {
	if a.Name != "" {
		return a.Name
	}
	if a.MIME != "" {
		return a.MIME
	}
	return fmt.Sprintf("image %d", i+1)
}

// IsBadAttachment reports whether err is Attach's refusal of an
// attachment (the client's input, not Zero's failure).
func IsBadAttachment(err error) bool {
	return errors.Is(err, loop.ErrBadImage) || errors.Is(err, vision.ErrNotImage) ||
		errors.Is(err, vision.ErrTooLarge) || errors.Is(err, vision.ErrCorrupt)
}

// Image returns a picture of the session's messages by the hash its events
// name it by, with its data.
func (s *Session) Image(hash string) (llm.Image, bool) {
	return s.ls.Image(hash)
}

// imagesTitle titles a session whose first message is images only.
func imagesTitle(images []llm.Image) string {
	if len(images) == 0 {
		return ""
	}
	names := make([]string, 0, len(images))
	for _, im := range images {
		if im.Name != "" {
			names = append(names, im.Name)
		}
	}
	if len(names) == 0 {
		return "image"
	}
	return strings.Join(names, ", ")
}

// AttachFile reads a picture the user named by path (zero run --attach,
// zero chat's @path, zero_run's attach): relative to the first root, and
// inside one of roots, read through the root (a link leading out is
// refused, as is anything but a regular file), at most
// vision.MaxSourceBytes.
func AttachFile(roots []string, path string) (Attachment, error) {
	if len(roots) == 0 {
		return Attachment{}, fmt.Errorf("attach %s: no workspace to read it from", path)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	for _, r := range roots {
		if !rootfs.Within(r, p) {
			continue
		}
		rel, err := filepath.Rel(r, p)
		if err != nil {
			break
		}
		data, err := rootfs.ReadFile(r, "", filepath.ToSlash(rel), vision.MaxSourceBytes)
		if err != nil {
			if rootfs.IsEscape(err) {
				return Attachment{}, fmt.Errorf("attach %s: it leads outside the workspace through a link", path)
			}
			return Attachment{}, fmt.Errorf("attach %s: %s", path, rootfs.Reason(err))
		}
		return Attachment{Name: path, Data: data}, nil
	}
	return Attachment{}, fmt.Errorf("attach %s: it is outside the workspace (%s)", path, strings.Join(roots, ", "))
}
