package secrets

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type config struct {
	Model string
	Key   string
}

func TestHandler(t *testing.T) {
	t.Parallel()
	const key = `sk-"quoted"\key`
	var current atomic.Pointer[Set]
	for _, newHandler := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		current.Store(nil)
		log := slog.New(NewHandler(newHandler(&buf), current.Load))
		log.Info("before: " + key) // no Set yet: logged as it is
		if !strings.Contains(buf.String(), "before: sk-") {
			t.Fatalf("without a Set the record changed: %s", buf.String())
		}
		buf.Reset()

		current.Store(maskOnly("OPENAI_API_KEY", key))
		log = log.With("component", "llm", "key", key).WithGroup("req")
		log.Info("calling with "+key,
			"header", "Bearer "+key,
			"err", fmt.Errorf("status 401 for %s", key),
			"who", stringer{"key " + key},
			"cfg", config{Model: "gpt", Key: key},
			"n", 3,
			slog.Group("inner", "k", key),
			"plain", config{Model: "gpt"},
		)
		out := buf.String()
		for _, leak := range []string{"sk-", "quoted"} {
			if strings.Contains(out, leak) {
				t.Errorf("%q in the log: %s", leak, out)
			}
		}
		if n := strings.Count(out, "§§secret(OPENAI_API_KEY)"); n != 7 {
			t.Errorf("%d aliases in the log, want 7: %s", n, out)
		}
		if !strings.Contains(out, "n=3") && !strings.Contains(out, `"n":3`) {
			t.Errorf("a number changed: %s", out)
		}
		if !strings.Contains(out, "Model:gpt") && !strings.Contains(out, `"Model":"gpt"`) {
			t.Errorf("a value without a secret changed: %s", out)
		}
	}
}

func TestHandlerEnabled(t *testing.T) {
	t.Parallel()
	h := NewHandler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), func() *Set { return nil })
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled does not follow the wrapped handler")
	}
	if err := h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelError, "x", 0)); err != nil {
		t.Error(err)
	}
}

// A handler wrapped over another that masks with the same Set leaves the
// record to it: masked once, as well as by two.
func TestHandlerNestedMasksOnce(t *testing.T) {
	t.Parallel()
	const key = "sk-nested-0123456789"
	set := maskOnly("K", key)
	other := maskOnly("OTHER", "other-value-123")
	var buf bytes.Buffer
	inner := NewHandler(slog.NewTextHandler(&buf, nil), func() *Set { return set })
	same := slog.New(NewHandler(inner.WithAttrs([]slog.Attr{slog.String("component", "loop")}), func() *Set { return set }))
	diff := slog.New(NewHandler(inner, func() *Set { return other }))
	same.Info("with "+key, "err", fmt.Errorf("no %s", key))
	diff.Info("with "+key+" and other-value-123", "k", key)
	out := buf.String()
	if strings.Contains(out, key) || strings.Contains(out, "other-value-123") ||
		strings.Count(out, "§§secret(K)") != 4 || strings.Count(out, "§§secret(OTHER)") != 1 {
		t.Errorf("log:\n%s", out)
	}

	// Masked once: a Set one of whose values is inside another's alias
	// tells a record masked twice from one masked once.
	twice := maskOnly("A", "key-1234", "B", "secret(A)")
	buf.Reset()
	log := slog.New(NewHandler(NewHandler(slog.NewTextHandler(&buf, nil), func() *Set { return twice }), func() *Set { return twice }))
	log.Info("with key-1234")
	if out := buf.String(); !strings.Contains(out, "with §§secret(A)") {
		t.Errorf("the record was masked twice: %s", out)
	}
}
