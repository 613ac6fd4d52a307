package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/profiles"
)

// WindowTimeout bounds the question to an endpoint about its model's
// context window, asked once per endpoint and model per process when the
// first session is built: a server that does not answer at once keeps the
// default rather than holding the session up.
const WindowTimeout = 3 * time.Second

// windowState is what the app knows of its models' windows and token
// counts, by endpoint and model.
type windowState struct {
	mu      sync.Mutex
	windows map[string]*knownWindow
	cals    map[string]*llm.Calibrator
	file    *calibrationFile
}

// knownWindow is one endpoint's answer, asked once.
type knownWindow struct {
	once sync.Once
	w    llm.Window // Tokens 0: unknown
	err  error
}

// modelKey names an endpoint and model: the base URL as shown (no
// credentials or query) and the model.
func modelKey(m config.Model) string {
	return shownURL(cmp.Or(m.BaseURL, llm.DefaultBaseURL)) + " " + m.Model
}

// userSet reports whether the configuration's key was set by the user (a
// file, a variable or a flag), not left at its default or taken from a
// default of chat's.
func (a *App) userSet(key string) bool {
	o := a.Config.Origin(key)
	return o != "" && o != "default" && !strings.HasSuffix(o, "(default)")
}

// Window is the context window of role's model for a profile and the
// session's model ("" for the configured one), and where it comes from:
// models.<role>.context_length when the user set it; else what the
// endpoint says (asked once per endpoint and model in the process, within
// WindowTimeout; a failure is logged at debug level and keeps the
// default); else 128000. The endpoint's warning (Ollama running the model
// with less than it can read) is logged once.
func (a *App) Window(ctx context.Context, role string, p *profiles.Profile, model string) (tokens int, source string) {
	ep, err := a.endpoint(role, p, model)
	key := "models." + role + ".context_length"
	if a.userSet(key) || err != nil {
		return cmp.Or(ep.m.ContextLength, config.DefaultContextLength), key + " (" + a.Config.Origin(key) + ")"
	}
	if strings.HasPrefix(modelKey(ep.m), llm.DefaultBaseURL+" ") {
		return config.DefaultContextLength, "default (OpenAI's API does not say)"
	}
	kw := a.knownWindow(ep.m)
	kw.once.Do(func() {
		c, err := a.client(role, p, model)
		if err != nil {
			kw.err = err
			return
		}
		ctx, cancel := context.WithTimeout(ctx, WindowTimeout)
		defer cancel()
		w, err := c.ContextWindow(ctx)
		a.windows.mu.Lock()
		kw.w, kw.err = w, err
		a.windows.mu.Unlock()
		if w.NoTools && ep.m.ToolProtocol != "native" {
			// auto: no native calls for a model its endpoint lists without
			// them (the client remembers it for its endpoint and model).
			c.RefuseTools()
			a.Logger.Info("the endpoint lists the model without tool support: it calls tools in Agent Zero's JSON protocol", "model", ep.m.Model)
		}
		if w.NoVision && ep.m.Vision != "true" {
			// auto: no images for a model its endpoint lists as text only.
			c.SetBlind()
			a.Logger.Info("the endpoint lists the model as reading no images: attached images are described to it in words", "model", ep.m.Model)
		}
		switch {
		case err != nil:
			a.Logger.Debug("the model's context window is not known; using the default", "model", ep.m.Model, "default", config.DefaultContextLength, "err", err)
		case w.Warning != "":
			a.Logger.Warn(w.Warning)
		default:
			a.Logger.Debug("the model's context window", "model", ep.m.Model, "tokens", w.Tokens, "source", w.Source)
		}
	})
	a.windows.mu.Lock()
	w, werr := kw.w, kw.err // learnedWindow may change it
	a.windows.mu.Unlock()
	if werr != nil || w.Tokens <= 0 {
		return config.DefaultContextLength, "default (the endpoint does not say)"
	}
	return w.Tokens, "the endpoint: " + w.Source
}

// AskWindow asks, in the background, for the context window of the chat
// model that a session of profile name (the configured one when "") and
// model ("" for the configured one) will use: the endpoint answers while
// the sandbox opens, and the session's build finds it known (or waits for
// the question already asked) instead of asking only then.
func (a *App) AskWindow(name, model string) {
	p, err := a.Loader.Load(cmp.Or(name, a.Config.Profile))
	if err != nil {
		return // the session's build says why
	}
	go a.Window(context.Background(), "chat", p, model) // bounded by WindowTimeout
}

func (a *App) knownWindow(m config.Model) *knownWindow {
	a.windows.mu.Lock()
	defer a.windows.mu.Unlock()
	if a.windows.windows == nil {
		a.windows.windows = map[string]*knownWindow{}
	}
	k := modelKey(m)
	kw := a.windows.windows[k]
	if kw == nil {
		kw = &knownWindow{}
		a.windows.windows[k] = kw
	}
	return kw
}

// learnedWindow records a window an overflow answer stated, so that later
// sessions of the process start within it.
func (a *App) learnedWindow(m config.Model, tokens int) {
	kw := a.knownWindow(m)
	kw.once.Do(func() {})
	a.windows.mu.Lock()
	defer a.windows.mu.Unlock()
	if kw.w.Tokens == 0 || tokens < kw.w.Tokens {
		kw.w, kw.err = llm.Window{Tokens: tokens, Source: "the server's answer to a prompt over it"}, nil
	}
}

// windowWarning is the endpoint's warning about its window, once asked.
func (a *App) windowWarning(m config.Model) string {
	kw := a.knownWindow(m)
	a.windows.mu.Lock()
	defer a.windows.mu.Unlock()
	return kw.w.Warning
}

// calibrator is the token counter of an endpoint's model, calibrated by
// what the endpoint reports, and kept across runs in the state folder.
func (a *App) calibrator(m config.Model) *llm.Calibrator {
	a.windows.mu.Lock()
	defer a.windows.mu.Unlock()
	if a.windows.cals == nil {
		a.windows.cals = map[string]*llm.Calibrator{}
		a.windows.file = &calibrationFile{path: calibrationPath(a.env), logger: a.Logger}
	}
	k := modelKey(m)
	if c := a.windows.cals[k]; c != nil {
		return c
	}
	f := a.windows.file
	c := llm.NewCalibrator(m.Model, f.get(k), func(cal llm.Calibration) { f.put(k, cal) })
	a.windows.cals[k] = c
	return c
}

// calibrationPath is the calibrations' file in the state folder; "" when
// there is none (no home).
func calibrationPath(env Env) string {
	if dir := env.StateDir(); dir != "" {
		return filepath.Join(dir, "calibration.json")
	}
	return ""
}

// calibrationFile keeps the calibrations of every endpoint and model across
// runs: a small JSON file, read once, tolerant of damage (a damaged file is
// ignored with a log line and replaced at the next write), written whole
// and atomically (a temporary file renamed over it).
type calibrationFile struct {
	path   string
	logger interface {
		Warn(msg string, args ...any)
	}
	mu     sync.Mutex
	loaded bool
	data   calibrations
	// written is each model's ratio as last written: a calibration that
	// moved less than rewriteRatio from it is kept in memory only (the
	// file is written on every request otherwise, on the turn's path).
	written map[string]float64
}

// rewriteRatio is how far (relatively) a ratio moves before the file is
// written again.
const rewriteRatio = 0.01

type calibrations struct {
	Version int                        `json:"version"`
	Models  map[string]llm.Calibration `json:"models"`
}

// maxCalibrationFile bounds what is read: the file holds a few lines per model.
const maxCalibrationFile = 1 << 20

func (f *calibrationFile) load() {
	if f.loaded {
		return
	}
	f.loaded = true
	f.data = calibrations{Version: 1, Models: map[string]llm.Calibration{}}
	if f.path == "" {
		return
	}
	b, err := readBounded(f.path, maxCalibrationFile)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var d calibrations
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		f.logger.Warn("the token calibrations are damaged and are ignored; Zero learns them again", "file", f.path, "err", err)
		return
	}
	for k, c := range d.Models {
		if c.Valid() {
			f.data.Models[k] = c
		}
	}
}

func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%d bytes, more than a calibration file ever holds", st.Size())
	}
	b := make([]byte, st.Size())
	_, err = fh.ReadAt(b, 0)
	if err != nil && st.Size() > 0 {
		return nil, err
	}
	return b, nil
}

func (f *calibrationFile) get(key string) llm.Calibration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.load()
	return f.data.Models[key]
}

// put records key's calibration and writes the file when the ratio
// moved since it was last written (or was never written by this process).
func (f *calibrationFile) put(key string, cal llm.Calibration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.load()
	f.data.Models[key] = cal
	if f.path == "" {
		return
	}
	if was, ok := f.written[key]; ok && math.Abs(cal.Ratio-was) < rewriteRatio*was {
		return
	}
	if f.written == nil {
		f.written = map[string]float64{}
	}
	f.written[key] = cal.Ratio
	if err := writeAtomic(f.path, f.data); err != nil {
		f.logger.Warn("saving the token calibrations", "file", f.path, "err", err)
	}
}

// writeAtomic writes v as JSON to path through a temporary file renamed
// over it, so a reader never sees half a file.
func writeAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".calibration-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// countedModel is a model client whose answers' usage calibrates the token
// count of its endpoint and model: every call that reports its prompt's
// tokens (the utility model's summaries and memories always do; the chat
// model's do when the stream runs to its end).
type countedModel struct {
	reachModel
	cal *llm.Calibrator
}

func (m countedModel) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	res, err := m.reachModel.Stream(ctx, req, fn)
	if err == nil && res.Usage.PromptTokens > 0 {
		m.cal.ObservePrompt(res.Usage.PromptTokens, req.Messages)
	}
	return res, err
}

// sessionFit is what a session gets of its chat model's window and counts.
type sessionFit struct {
	window                   int
	maxOutput, utilityOutput int
	count                    func(string) int // nil: loop's default
	learned                  func(int)
}

// sessionFit resolves the window (see Window), the output caps and the
// calibrated token count of a session's chat model for profile name.
func (a *App) sessionFit(name, model string, withModel bool) sessionFit {
	fit := sessionFit{window: a.Config.Models.Chat.ContextLength}
	if !withModel {
		return fit
	}
	p, err := a.Loader.Load(name)
	if err != nil {
		return fit // SetupFor loaded it: not reached
	}
	chat, err := a.endpoint("chat", p, model)
	if err != nil {
		return fit
	}
	fit.window, _ = a.Window(context.Background(), "chat", p, model)
	fit.maxOutput = chat.m.MaxOutputTokens
	if util, err := a.endpoint("utility", p, ""); err == nil {
		fit.utilityOutput = util.m.MaxOutputTokens
	}
	fit.count = a.calibrator(chat.m).Count
	fit.learned = func(tokens int) { a.learnedWindow(chat.m, tokens) }
	return fit
}
