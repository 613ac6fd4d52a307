package hooks

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // "" = no change
		wantErr bool
	}{
		{in: ""},
		{in: " \n\t"},
		{in: "{}"},
		{in: " { }\n"},
		{in: `{"a":1}`, want: `{"a":1}`},
		{in: "\n{\"a\": [1, 2]}\n\n", want: `{"a": [1, 2]}`},
		{in: `{"a":1} trailing`, wantErr: true},
		{in: `{"a":1}{"b":2}`, wantErr: true},
		{in: `[{"a":1}]`, wantErr: true},
		{in: `"text"`, wantErr: true},
		{in: `null`, wantErr: true},
		{in: `{"a":`, wantErr: true},
		{in: "hello", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseAnswer([]byte(tt.in))
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || (err != nil) != tt.wantErr {
				t.Errorf("parseAnswer(%q) err=%v, (-want +got):\n%s", tt.in, err, diff)
			}
		})
	}
}

func TestUnmarshalAnswer(t *testing.T) {
	t.Parallel()
	type result struct {
		Chunk string
		Args  map[string]any
	}
	tests := []struct {
		name    string
		in      string
		want    result
		wantErr error // nil = success; errAny = some error
	}{
		{name: "allowed fields", in: `{"chunk":"hi","tool_args":{"a":1}}`, want: result{Chunk: "hi", Args: map[string]any{"a": 1.0}}},
		{name: "subset", in: `{"chunk":"x"}`, want: result{Chunk: "x"}},
		{name: "unknown field", in: `{"chunk":"x","block":true}`, wantErr: ErrFieldNotAllowed},
		{name: "wrong type", in: `{"chunk":5}`, wantErr: errAny},
		{name: "not an object", in: `[1]`, wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got result
			err := UnmarshalAnswer(json.RawMessage(tt.in), map[string]any{"chunk": &got.Chunk, "tool_args": &got.Args})
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("UnmarshalAnswer(%s) = %v", tt.in, err)
			case tt.wantErr == nil:
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("UnmarshalAnswer(%s) (-want +got):\n%s", tt.in, diff)
				}
			case err == nil:
				t.Errorf("UnmarshalAnswer(%s) = nil, want an error", tt.in)
			case tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Errorf("UnmarshalAnswer(%s) = %v, want %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestWarningMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    Warning
		want string
	}{
		{
			name: "extension",
			w: Warning{Point: "response_stream", Extension: "_20_x", Path: "/e/response_stream/_20_x.sh",
				Err: &scriptError{kind: ErrScriptFailed, cause: errors.New("exit status 2"), stderr: "bad"}},
			want: "hooks: response_stream/_20_x (/e/response_stream/_20_x.sh): script failed: exit status 2; stderr: bad",
		},
		{
			name: "point folder",
			w:    Warning{Point: "respons_stream", Path: "/e/respons_stream", Err: ErrUnknownPoint},
			want: "hooks: respons_stream (/e/respons_stream): unknown extension point",
		},
		{
			name: "path only",
			w:    Warning{Path: "/e/x.sh", Err: ErrMisplaced},
			want: "hooks: /e/x.sh: executable outside a point directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.w.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := tt.w.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tb := &tailBuffer{max: 8}
	for range 10 {
		tb.Write([]byte("0123456789"))
	}
	if got, want := tb.String(), "…23456789"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if tb.total != 100 || len(tb.buf) > 2*tb.max {
		t.Errorf("total=%d len(buf)=%d", tb.total, len(tb.buf))
	}
	cb := &capBuffer{max: 4}
	if n, err := cb.Write([]byte("abcdef")); n != 6 || err != nil || !cb.over || cb.buf.String() != "abcd" {
		t.Errorf("capBuffer: n=%d err=%v over=%v buf=%q", n, err, cb.over, cb.buf.String())
	}
}
