package loop

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/llm"
)

// Input is a user message: its text and the images attached to it (made by
// package vision: checked, scaled down, re-encoded).
type Input struct {
	Text   string
	Images []llm.Image
}

// Bounds of the images a session takes and sends.
const (
	// MaxInputImages is the most images one user message may attach.
	MaxInputImages = 10
	// MaxRequestImages is the most images one model request carries: the
	// newest (Agent Zero's max_embeds); older ones are placeholders.
	MaxRequestImages = 10
	// MaxToolImages is the most images one tool result brings.
	MaxToolImages = 10
	// MaxImageBytes is the most bytes of one image, as prepared.
	MaxImageBytes = 4 << 20
)

// ErrBadImage is the error of an image a session does not take.
var ErrBadImage = errors.New("image refused")

// checkInput is checkMessage for a message with images: at most
// MaxInputImages, each with data of an image type within MaxImageBytes.
func (s *Session) checkInput(in Input) error {
	if len(in.Images) > MaxInputImages {
		return fmt.Errorf("%w: %d images attached, at most %d", ErrBadImage, len(in.Images), MaxInputImages)
	}
	for i, im := range in.Images {
		if err := checkImage(im); err != nil {
			return fmt.Errorf("image %d: %w", i+1, err)
		}
	}
	return s.checkMessage(in.Text)
}

func checkImage(im llm.Image) error {
	switch {
	case !strings.HasPrefix(im.MIME, "image/"):
		return fmt.Errorf("%w: %q is not an image type", ErrBadImage, im.MIME)
	case len(im.Data) == 0 || im.Hash == "":
		return fmt.Errorf("%w: no data", ErrBadImage)
	case len(im.Data) > MaxImageBytes:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadImage, len(im.Data), MaxImageBytes)
	}
	return nil
}

// boundImages keeps a tool result's images that a model can take: at most
// MaxToolImages, each checked and its name masked; what is left out is
// warned about.
func (a *Agent) boundImages(images []llm.Image) []llm.Image {
	if len(images) == 0 {
		return nil
	}
	out := make([]llm.Image, 0, min(len(images), MaxToolImages))
	for _, im := range images {
		if len(out) == MaxToolImages {
			a.warn("", fmt.Sprintf("a tool result brought %d images; only the first %d are kept", len(images), MaxToolImages))
			break
		}
		if err := checkImage(im); err != nil {
			a.warn("", "a tool result's image was left out: "+err.Error())
			continue
		}
		if a.session.cfg.Secrets != nil {
			// Named after what the tool read (a URI with an expanded
			// secret): aliases only, as the result's text.
			im.Name = a.session.mask(im.Name)
		}
		out = append(out, im)
	}
	return out
}

// keepImages remembers images by hash for Image.
func (s *Session) keepImages(images []llm.Image) {
	if len(images) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.images == nil {
		s.images = map[string]llm.Image{}
	}
	for _, im := range images {
		if len(im.Data) > 0 {
			s.images[im.Hash] = im
		}
	}
}

// Image returns an image of the session's messages by its hash (as events
// name it), with its data.
func (s *Session) Image(hash string) (llm.Image, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	im, ok := s.images[hash]
	return im, ok
}

// refs are images without their data, as events carry them.
func refs(images []llm.Image) []llm.Image {
	if len(images) == 0 {
		return nil
	}
	out := make([]llm.Image, len(images))
	for i, im := range images {
		out[i] = im.Ref()
	}
	return out
}

// modelVision is implemented by a model client that remembers whether its
// endpoint's model cannot see (*llm.Client).
type modelVision interface {
	Blind() bool
	SetBlind()
}

// sees reports whether the agent's chat model is sent images: always with
// VisionOn, never with VisionOff, and with VisionAuto unless the endpoint
// said or showed the model cannot see.
func (a *Agent) sees() bool {
	switch a.setup.Vision {
	case VisionOn:
		return true
	case VisionOff:
		return false
	}
	if mv, ok := a.setup.Model.(modelVision); ok && mv.Blind() {
		return false
	}
	return !a.blind.Load()
}

// errImagesRefused ends a model call whose endpoint refused its images:
// the turn is sent again without them.
var errImagesRefused = errors.New("the endpoint refused the request's images")

// refuseImages records that the endpoint refused images (its client
// remembers it for its endpoint and model, else the agent) and says so.
func (a *Agent) refuseImages(item string, err error) {
	if mv, ok := a.setup.Model.(modelVision); ok {
		mv.SetBlind()
	}
	a.blind.Store(true)
	a.warn(item, fmt.Sprintf("the model's endpoint refused the images (%v): they are described to it in words from now on (set models.chat.vision to say whether it sees)", err))
	a.session.blindSaid.Store(true)
}

// hasImages reports whether any message holds an image.
func hasImages(msgs []llm.Message) bool {
	for i := range msgs {
		if len(msgs[i].Images) > 0 {
			return true
		}
	}
	return false
}

// fitImages is what a request carries of the messages' images: all of
// them, up to the newest MaxRequestImages, for a model that sees; none for
// one that does not. An image left out becomes a placeholder at the end of
// its message's text, so the model knows it was there. The messages are
// copied where they change (they may be the history's). The first time a
// session's image is withheld from a blind model, the user is told.
func (a *Agent) fitImages(item string, msgs []llm.Message) []llm.Message {
	if !hasImages(msgs) {
		return msgs
	}
	sees := a.sees()
	why := "not shown: the model cannot see images"
	budget := MaxRequestImages
	if !sees {
		budget = 0
	}
	out := msgs
	copied := false
	withheld := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		n := len(m.Images)
		if n == 0 || n <= budget {
			budget -= n
			continue
		}
		keep := max(budget, 0)
		budget = 0
		if !copied {
			out, copied = slices.Clone(msgs), true
		}
		var b strings.Builder
		b.WriteString(m.Content)
		for _, im := range m.Images[:n-keep] {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			if sees {
				b.WriteString(im.Placeholder("no longer shown: only the newest " + strconv.Itoa(MaxRequestImages) + " images are sent"))
			} else {
				b.WriteString(im.Placeholder(why))
			}
			withheld++
		}
		out[i].Content = b.String()
		out[i].Images = slices.Clip(m.Images[n-keep:])
		if len(out[i].Images) == 0 {
			out[i].Images = nil
		}
	}
	if !sees && withheld > 0 && a.session.blindSaid.CompareAndSwap(false, true) {
		a.warn(item, "the chat model cannot see images ("+a.blindReason()+"): the attached images are not sent; it is told an image is there")
	}
	return out
}

// blindReason says why the chat model is taken not to see.
func (a *Agent) blindReason() string {
	if a.setup.Vision == VisionOff {
		return "models.chat.vision is false"
	}
	return "its endpoint says so; set models.chat.vision: true if it does see"
}
