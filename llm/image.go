package llm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Image is a picture in a message, for a model that sees: what the user
// attached, what vision_load loaded, what an MCP tool returned. Package
// vision makes them (checked, scaled down, re-encoded); a message carries
// them beside its text.
type Image struct {
	// MIME is image/png, image/jpeg, image/gif or image/webp.
	MIME string `json:"mime"`
	// Data is the encoded picture; nil in a reference (Ref), which names
	// it by Hash only.
	Data []byte `json:"data,omitempty"`
	// Hash is the hex SHA-256 of Data: how the store keeps an image once
	// and how events name it.
	Hash   string `json:"sha256"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	// Name says where it came from: a file's name or path, "pasted image".
	Name string `json:"name,omitempty"`
}

// NewImage is an image of data, its Hash set.
func NewImage(mime string, data []byte, width, height int, name string) Image {
	sum := sha256.Sum256(data)
	return Image{MIME: mime, Data: data, Hash: hex.EncodeToString(sum[:]), Width: width, Height: height, Name: name}
}

// Ref is the image without its data, as events and the store's messages
// name it.
func (i Image) Ref() Image {
	i.Data = nil
	return i
}

// DataURL is the image as a data: URL, as the Chat Completions API takes
// it in an image_url part.
func (i Image) DataURL() string {
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(i.MIME) + base64.StdEncoding.EncodedLen(len(i.Data)))
	b.WriteString("data:")
	b.WriteString(i.MIME)
	b.WriteString(";base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(i.Data))
	return b.String()
}

// Placeholder is the text that stands for the image where the picture
// itself is not sent: to a model that cannot see, in a summary's source,
// past the images one request may hold.
func (i Image) Placeholder(why string) string {
	var b strings.Builder
	b.WriteString("[image")
	if i.Name != "" {
		b.WriteString(" " + i.Name)
	}
	if i.Width > 0 && i.Height > 0 {
		fmt.Fprintf(&b, ", %d×%d", i.Width, i.Height)
	}
	if why != "" {
		b.WriteString(": " + why)
	}
	b.WriteString("]")
	return b.String()
}

// ImageTokens is what one image is counted as in the model's context until
// the endpoint reports the real count: Agent Zero's estimate for an image
// scaled to at most 768,000 pixels.
const ImageTokens = 1500

// ErrImagesRefused marks a request the endpoint refused because it holds
// images the model cannot read.
var ErrImagesRefused = errors.New("the model's endpoint does not take images")

// RefusesImages reports whether err is an endpoint's refusal of the image
// parts of a request (the model has no vision): OpenAI's "image_url is
// only supported by certain models", vLLM's "is not a multimodal model",
// llama.cpp's "image input is not supported", Ollama's and LM Studio's
// words for it.
func RefusesImages(err error) bool {
	if errors.Is(err, ErrImagesRefused) {
		return true
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode < 400 || ae.StatusCode >= 500 || ae.StatusCode == 429 {
		return false
	}
	msg := strings.ToLower(ae.Message)
	for _, s := range []string{
		"image_url is only supported", "image input is not supported", "does not support image",
		"doesn't support image", "not a multimodal model", "multimodal is not supported",
		"does not support vision", "vision is not supported", "model does not support images",
		"images are not supported", "image_url' is not supported", "image content is not supported",
		"invalid content type. image_url", "unsupported content type: image",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// blind remembers the endpoints and models that cannot see, for the
// process: what their metadata said, or a refusal of image parts.
var blind sync.Map // baseURL + "\x00" + model -> struct{}

// Blind reports whether this endpoint said, or showed by refusing images,
// that this model cannot see (see [Client.SetBlind]).
func (c *Client) Blind() bool {
	_, ok := blind.Load(c.opts.BaseURL + "\x00" + c.opts.Model)
	return ok
}

// SetBlind records that the model of this endpoint cannot see, for every
// Client of the process with the same endpoint and model.
func (c *Client) SetBlind() {
	blind.Store(c.opts.BaseURL+"\x00"+c.opts.Model, struct{}{})
}

// listsNoVision reports whether what an endpoint says a model reads is
// there and lacks images: OpenRouter's architecture.input_modalities
// without "image", Ollama's capabilities without "vision" (which it lists
// for every model that sees), LM Studio's type "llm" rather than "vlm".
func listsNoVision(m map[string]json.RawMessage) bool {
	var arch struct {
		Input []string `json:"input_modalities"`
	}
	if json.Unmarshal(m["architecture"], &arch) == nil && arch.Input != nil {
		return !slices.Contains(arch.Input, "image")
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) == nil && (typ == "llm" || typ == "vlm") {
		return typ == "llm"
	}
	return false
}

// ollamaNoVision reports whether Ollama's capabilities list is there and
// lacks "vision".
func ollamaNoVision(raw json.RawMessage) bool {
	var list []string
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return false
	}
	return !slices.Contains(list, "vision")
}
