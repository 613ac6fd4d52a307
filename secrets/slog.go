package secrets

import (
	"context"
	"encoding"
	"fmt"
	"log/slog"
)

// NewHandler returns a slog.Handler that masks secrets before next sees a
// record: the message, and every attribute, groups included. A string is
// masked as text; an error, a fmt.Stringer or any other value is masked
// through its text (Error, MarshalText, String, or fmt's %+v) and, when that
// text held a secret, logged as the masked text instead of the value.
//
// set is called once per record and per WithAttrs, so the Set may be
// replaced later (pass an atomic.Pointer[Set]'s Load); it may return nil.
// Attributes given to WithAttrs are masked with the Set of that moment.
//
// A record is masked once: when next is itself such a handler and masks
// with the same Set at that moment (a session's logger wrapped again over
// the process's), the record is passed on for next to mask.
func NewHandler(next slog.Handler, set func() *Set) slog.Handler {
	return &handler{next: next, set: set}
}

type handler struct {
	next slog.Handler
	set  func() *Set
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	s := h.set()
	if s.matcher() == nil {
		return h.next.Handle(ctx, r)
	}
	if inner, ok := h.next.(*handler); ok && inner.set() == s {
		return h.next.Handle(ctx, r) // it masks the record with s
	}
	nr := slog.NewRecord(r.Time, r.Level, s.Mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(maskAttr(s, a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	s := h.set()
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = maskAttr(s, a)
	}
	return &handler{next: h.next.WithAttrs(masked), set: h.set}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), set: h.set}
}

func maskAttr(s *Set, a slog.Attr) slog.Attr {
	a.Key = s.Mask(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(s.Mask(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			out[i] = maskAttr(s, x)
		}
		a.Value = slog.GroupValue(out...)
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case encoding.TextMarshaler:
			b, err := x.MarshalText()
			if err != nil {
				return a
			}
			text = string(b)
		case fmt.Stringer:
			text = x.String()
		case []byte:
			text = string(x)
		default:
			text = fmt.Sprintf("%+v", x)
		}
		if masked := s.Mask(text); masked != text {
			a.Value = slog.StringValue(masked)
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a
}
