package server

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/store"
)

// fill sets every field of the struct v points to to a value that is not
// its zero value, recursively.
func fill(v reflect.Value) { fillIn(v, map[reflect.Type]bool{}) }

// fillIn is fill that leaves nil a pointer to a type being filled above
// it (loop.Usage's parts by role are Usages, with no parts of their own).
func fillIn(v reflect.Value, above map[reflect.Type]bool) {
	fill := func(v reflect.Value) { fillIn(v, above) }
	switch v.Kind() {
	case reflect.Pointer:
		if above[v.Type()] {
			return
		}
		above[v.Type()] = true
		defer delete(above, v.Type())
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"a":1}`))
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // an image's data, which events never carry (references only)
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

// TestEventOfCarriesEverything: every field of the engine's event reaches
// the editor-facing one under the JSON name it had when events were first
// stored (version 1), and Event has no field the engine's lacks but "v".
// A field added to or renamed in loop.Event fails here until EventOf and
// Event say what editors and stored sessions get of it.
func TestEventOfCarriesEverything(t *testing.T) {
	t.Parallel()
	var e loop.Event
	fill(reflect.ValueOf(&e).Elem())
	var fromLoop, fromServer map[string]any
	b, _ := json.Marshal(e)
	if err := json.Unmarshal(b, &fromLoop); err != nil {
		t.Fatal(err)
	}
	se := EventOf(e)
	b, _ = json.Marshal(se)
	if err := json.Unmarshal(b, &fromServer); err != nil {
		t.Fatal(err)
	}
	if fromServer["v"] != float64(EventVersion) {
		t.Errorf("v = %v, want %d", fromServer["v"], EventVersion)
	}
	delete(fromServer, "v")
	if !reflect.DeepEqual(fromLoop, fromServer) {
		t.Errorf("EventOf changes the event:\nloop:   %v\nserver: %v\nloop's keys %q, server's %q", fromLoop, fromServer,
			slices.Sorted(maps.Keys(fromLoop)), slices.Sorted(maps.Keys(fromServer)))
	}
}

// TestDecodeEventVersions: an event stored before events were versioned
// (no "v") reads as version 1, the same shape.
func TestDecodeEventVersions(t *testing.T) {
	t.Parallel()
	old := `{"seq":3,"session":"s","agent":0,"item":"tool-2","type":"tool_result","time":"2026-01-02T03:04:05Z","tool":"text_editor","status":"completed","diffs":[{"path":"a.txt","old_text":null,"new_text":"hi\n"}]}`
	e, err := DecodeEvent([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if e.V != 1 || e.Seq != 3 || e.Type != loop.EventToolResult || len(e.Diffs) != 1 || e.Diffs[0].OldText != nil || e.Diffs[0].NewText != "hi\n" {
		t.Errorf("decoded %+v", e)
	}
	b, _ := json.Marshal(e)
	again, err := DecodeEvent(b)
	if err != nil || !reflect.DeepEqual(again, e) {
		t.Errorf("round trip: %+v, %v; want %+v", again, err, e)
	}
}

// TestStoredEventsAreVersioned: what the store keeps is the versioned
// Event, and an event an earlier Zero stored (no "v") reads back, through
// the log, as version 1.
func TestStoredEventsAreVersioned(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(store.Session{ID: "s", Workspace: "/ws", Roots: []string{"/ws"}}); err != nil {
		t.Fatal(err)
	}
	st.AppendEvent("s", store.Event{Seq: 1, Type: "warning", Data: []byte(`{"seq":1,"session":"s","agent":0,"type":"warning","time":"2026-01-02T03:04:05Z","text":"old"}`)})
	l := newStoreLog(st, "s", 1, nil, 1)
	l.Append(Event{V: EventVersion, Session: "s", Type: loop.EventWarning, Text: "new"})
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Events("s", 0, 0)
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %d events, %v", len(stored), err)
	}
	if !strings.Contains(string(stored[1].Data), `"v":1`) {
		t.Errorf("stored %s, without \"v\":1", stored[1].Data)
	}
	evs, _ := l.Since(0) // the first one only from the store: the memory holds one
	if len(evs) != 2 || evs[0].V != 1 || evs[0].Text != "old" || evs[1].V != 1 || evs[1].Text != "new" {
		t.Errorf("read back %+v", evs)
	}
}
