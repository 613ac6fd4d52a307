package loop

import (
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
)

// Compression summarises around pictures: the utility model reads a
// placeholder naming each, a summary carries none, and the model is sent
// only the pictures of messages no summary covers. A picture counts as
// llm.ImageTokens toward the history.
func TestCompressionSummarisesAroundImages(t *testing.T) {
	t.Parallel()
	st := topicsState(999, 13) // 13 messages of 1,000 words
	pic := llm.NewImage("image/png", []byte("png bytes"), 640, 480, "shot.png")
	late := llm.NewImage("image/png", []byte("later png"), 10, 10, "late.png")
	st.Messages[2].Images = []llm.Image{pic}
	st.Messages[12].Images = []llm.Image{late}
	s, util := compressSession(t, 16000, st)
	if got, want := s.agent0.History.Tokens(), 13000+2*llm.ImageTokens; got < want {
		t.Fatalf("history tokens = %d, want at least %d: pictures count", got, want)
	}
	if !s.agent0.compressHistory(t.Context()) {
		t.Fatal("nothing was compressed")
	}
	if len(util.asked) == 0 || !strings.Contains(util.asked[0], "[image shot.png, 640×480]") {
		t.Fatalf("the utility model was not told of the picture (%d requests)", len(util.asked))
	}
	for _, sm := range s.agent0.History.State().Summaries {
		if strings.Contains(sm.Content, "png bytes") {
			t.Errorf("a summary carries a picture's data")
		}
	}
	var sent []llm.Image
	for _, m := range s.agent0.History.Output() {
		sent = append(sent, m.Images...)
	}
	if len(sent) != 1 || sent[0].Hash != late.Hash {
		t.Errorf("after compression the model sees %d pictures, want only the one no summary covers", len(sent))
	}
}

// In a window too small for a picture, a message large only because of it
// keeps its text and names the picture in its place.
func TestCompressionNamesLargePictures(t *testing.T) {
	t.Parallel()
	st := topicsState(9, 13)
	st.Messages[2].Images = []llm.Image{llm.NewImage("image/png", []byte("png bytes"), 640, 480, "shot.png")}
	s, _ := compressSession(t, 100+llm.ImageTokens, st)
	if !s.agent0.compressHistory(t.Context()) {
		t.Fatal("nothing was compressed")
	}
	sums := s.agent0.History.State().Summaries
	if len(sums) == 0 || sums[0].From != 2 || !strings.HasPrefix(sums[0].Content, "m2 x x") || !strings.Contains(sums[0].Content, "[image shot.png, 640×480]") {
		t.Fatalf("first summary = %+v, want message 2's text with the picture named", sums)
	}
}
