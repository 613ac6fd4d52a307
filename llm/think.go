package llm

import (
	"strings"
)

// thinkTags are the opening tags that mark a leading reasoning block in the
// content of models without a native reasoning field, with their closers.
var thinkTags = [...]struct{ open, close string }{
	{"<think>", "</think>"},
	{"<reasoning>", "</reasoning>"},
}

type thinkState int

const (
	thinkStart   thinkState = iota // deciding whether the content opens with a tag
	thinkInside                    // inside the block: text is reasoning
	thinkAfter                     // block closed: dropping whitespace before the answer
	thinkContent                   // plain answer text
)

// thinkSplitter turns a content stream into reasoning and answer deltas when
// the content starts with <think>…</think>. It holds back only the bytes that
// could still be part of a tag, so text reaches the caller as soon as it is
// known which kind it is.
type thinkSplitter struct {
	state thinkState
	close string
	held  string
}

// feed consumes the next piece of content and calls emit for every piece
// whose kind is decided. It stops at the first emit error and returns it.
func (s *thinkSplitter) feed(text string, emit func(DeltaKind, string) error) error {
	if s.state == thinkContent && s.held == "" {
		return emitNonEmpty(emit, Content, text)
	}
	buf := s.held + text
	s.held = ""
	for buf != "" {
		switch s.state {
		case thinkStart:
			trimmed := strings.TrimLeft(buf, " \t\r\n")
			if trimmed == "" {
				s.held = buf
				return nil
			}
			decided := false
			for _, tag := range thinkTags {
				switch {
				case strings.HasPrefix(trimmed, tag.open):
					s.state, s.close = thinkInside, tag.close
					buf = trimmed[len(tag.open):]
					decided = true
				case strings.HasPrefix(tag.open, trimmed):
					s.held = buf // could still become this tag
					return nil
				}
				if decided {
					break
				}
			}
			if !decided {
				s.state = thinkContent
			}
		case thinkInside:
			if i := strings.Index(buf, s.close); i >= 0 {
				if err := emitNonEmpty(emit, Reasoning, buf[:i]); err != nil {
					return err
				}
				s.state = thinkAfter
				buf = buf[i+len(s.close):]
				continue
			}
			keep := partialSuffix(buf, s.close)
			s.held = buf[len(buf)-keep:]
			return emitNonEmpty(emit, Reasoning, buf[:len(buf)-keep])
		case thinkAfter:
			buf = strings.TrimLeft(buf, " \t\r\n")
			if buf != "" {
				s.state = thinkContent
			}
		case thinkContent:
			return emitNonEmpty(emit, Content, buf)
		}
	}
	return nil
}

// flush emits whatever is still held at the end of the stream: an unfinished
// tag prefix is answer text, an unclosed block stays reasoning.
func (s *thinkSplitter) flush(emit func(DeltaKind, string) error) error {
	held := s.held
	s.held = ""
	switch s.state {
	case thinkStart:
		s.state = thinkContent
		return emitNonEmpty(emit, Content, held)
	case thinkInside:
		return emitNonEmpty(emit, Reasoning, held)
	}
	return nil
}

func emitNonEmpty(emit func(DeltaKind, string) error, k DeltaKind, text string) error {
	if text == "" {
		return nil
	}
	return emit(k, text)
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of tag: those bytes may be the start of the tag.
func partialSuffix(s, tag string) int {
	n := min(len(s), len(tag)-1)
	for ; n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
