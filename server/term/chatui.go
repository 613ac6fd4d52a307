package term

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/zeroagent/zero/termsafe"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// chatUI is the Bubble Tea model of zero chat, in inline mode: finished
// output is printed above the prompt area (it stays in the terminal's
// scrollback), and the prompt area holds the line being streamed, the
// spinner saying what Zero waits for, an approval question, and the input.
//
// Everything but the follower goroutine runs on Bubble Tea's event loop;
// the follower only hands the session's event batches over (eventsMsg).
type chatUI struct {
	ctx   context.Context
	c     Chat
	ws    string
	color bool
	send  func(tea.Msg) // the program's Send, set before it runs

	follows    sync.WaitGroup     // the follower goroutines
	stopFollow context.CancelFunc // ends the current follower

	sess  *server.Session
	view  *renderer  // the live view of zero run, writing into out
	out   *chatLines // its output, split into printed lines and the line in progress
	input textarea.Model
	spin  spinner.Model
	width int

	running    bool
	cancelling bool
	status     string           // what Zero waits for, shown with the spinner; "" hides it
	spinning   bool             // the spinner's ticks are going
	asks       []server.Request // approvals waiting for an answer here, oldest first
	ask        askState         // the answer to asks[0] being given
	mine       []string         // interventions sent from here and not yet delivered
	docker     bool             // the sandbox is a container, started by the first command
	sandboxUp  bool             // a command ran: the sandbox is up
	// preparing names the pictures of a message being read before it is
	// sent ("" when none is); notes are said under the message once its
	// run starts (an @word that names no file).
	preparing string
	notes     []string
	// doing says what the chat's own work going on is (a rewind, a
	// compaction), shown with the spinner; "" when none is.
	doing string
	// rewinds are the rewinds waiting for the answer to their question
	// about files changed outside the agent, by question id; asked
	// numbers the questions.
	rewinds map[string]server.RewindOptions
	asked   int
	// forms are the MCP servers' questions among asks, by id, with the
	// answers given so far (see questions.go).
	forms map[string]*formState

	history []string // the messages sent, for Up and Down
	histPos int      // len(history) while editing a new message
	draft   string   // the new message while Up shows an older one

	queue    []string // lines waiting to be printed, in order
	printing bool     // a print is on its way; the next waits for it
	quitting bool
	// leaving says the last key was a Ctrl-C at the empty idle prompt: the
	// next one leaves, any other key takes it back.
	leaving bool
	code    int // exit status
}

// printedMsg says the lines handed to Bubble Tea have been queued for the
// terminal.
type printedMsg struct{}

// eventsMsg is a batch of a session's events.
type eventsMsg struct {
	session string
	batch   server.Batch
}

// closedMsg says the session was closed (by another face, or the host).
type closedMsg struct{ session string }

// askGrace is how long an approval question is up before a key answers
// it: what is typed in that time was meant for the message being written.
const askGrace = 300 * time.Millisecond

// askState is the answer being given to the approval question shown (the
// oldest of asks). An answer is chosen with y, n or a and confirmed with
// Enter; the keys typed in the first askGrace after the question came up
// go to the message being written (the draft), which comes back with
// everything typed into it once the question is gone.
type askState struct {
	id    string // the request asked about; "" while none is shown
	ready bool   // askGrace has passed: keys typed now answer
	typed string // typed at the question since it was ready
	// typing says keys went to the draft since the question came up (or
	// since the last Enter): the person is writing a message, and the Enter
	// that follows is not taken as an answer.
	typing bool
	note   string // said under the question until the next key
}

// askReadyMsg says the question about request id has been up for
// askGrace.
type askReadyMsg struct{ id string }

// newChatUI returns the model; width is the terminal's (0 when unknown).
func newChatUI(ctx context.Context, c Chat) *chatUI {
	color, width := c.Color, c.Width
	in := textarea.New()
	in.ShowLineNumbers = false
	in.Placeholder = "Message the agent (/help for the commands)"
	in.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	// Plain styles: the terminal's own colors, whatever its background.
	plain := textarea.StyleState{Placeholder: lipgloss.NewStyle().Faint(true)}
	in.SetStyles(textarea.Styles{Focused: plain, Blurred: plain, Cursor: textarea.CursorStyle{Blink: true}})
	in.CharLimit = 0
	in.MaxHeight = 0
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	in.KeyMap.Paste.SetEnabled(false) // the terminal pastes (bracketed); no clipboard tool is run
	in.SetHeight(1)
	in.SetWidth(max(cmp.Or(width, 80)-1, 10))
	in.Focus()
	out := &chatLines{}
	return &chatUI{
		ctx: ctx, c: c, ws: c.Workspace, color: color,
		input:   in,
		spin:    spinner.New(spinner.WithSpinner(spinner.Dot)),
		out:     out,
		view:    newRenderer(out, color),
		width:   width,
		rewinds: map[string]server.RewindOptions{},
	}
}

// start shows the header and begins following sess; resumed sessions show
// their transcript first.
func (m *chatUI) start(sess *server.Session, resumed bool) {
	profile, model, backend := m.c.Host.Defaults(m.ws)
	m.docker = backend == "docker"
	if p := sess.Spec().Profile; p != "" {
		profile = p
	}
	model = cmp.Or(sess.Spec().Model, model)
	m.print(m.view.style(fmt.Sprintf("zero %s · %s · profile %s · model %s · sandbox %s", m.c.Version, m.ws, profile, model, backend), bold))
	m.print(m.view.style("Enter sends · Alt-Enter or Ctrl-J: new line · Ctrl-C cancels a run · Ctrl-D leaves · /help", dim))
	m.attach(sess, resumed)
}

// stop ends the follower; the program has returned.
func (m *chatUI) stop() {
	if m.stopFollow != nil {
		m.stopFollow()
	}
	m.follows.Wait()
}

// attach makes sess the chat's session: a session that existed shows its
// transcript briefly, then its events are followed from there on.
func (m *chatUI) attach(sess *server.Session, resumed bool) {
	m.print(m.out.end()...)
	if m.stopFollow != nil {
		m.stopFollow()
	}
	m.sess = sess
	m.view = newRenderer(m.out, m.color)
	m.asks, m.mine, m.cancelling = nil, nil, false
	clear(m.rewinds)
	m.syncAsk()
	var since int64
	if resumed {
		var evs []server.Event
		evs, since = sess.Events(0)
		m.print(m.transcript(sess.Info(), evs)...)
		if b := m.c.Manager.Approvals(); b != nil {
			m.asks = b.Pending(sess.ID())
		}
		m.addPendingQuestions(sess.ID())
	} else {
		m.print(m.view.style("session "+sess.ID(), dim))
	}
	m.running, m.status = sess.Running(), ""
	if m.running {
		m.status = "the agent is working"
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.stopFollow = cancel
	f := sess.Follow(since)
	id := sess.ID()
	m.follows.Go(func() {
		for {
			b, err := f.Next(ctx)
			if err != nil {
				if errors.Is(err, server.ErrClosed) {
					m.send(closedMsg{session: id})
				}
				return
			}
			m.send(eventsMsg{session: id, batch: b})
		}
	})
}

// Init implements tea.Model.
func (m *chatUI) Init() tea.Cmd {
	ask := m.syncAsk()
	m.print(m.out.take(m.width)...)
	return tea.Batch(textarea.Blink, ask, m.flush(), m.spinCmd())
}

// Update implements tea.Model.
func (m *chatUI) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case printedMsg:
		m.printing = false
	case tea.WindowSizeMsg:
		if msg.Width != m.width && msg.Width > 0 {
			// The line in progress ends here, cut at the new width: the
			// terminal rewraps what the prompt area shows, and the inline
			// renderer would redraw over a row it no longer knows about.
			m.width = msg.Width
			m.print(m.out.finish(m.width)...)
		}
		m.input.SetWidth(max(msg.Width-1, 10))
	case signalMsg:
		cmds = append(cmds, m.leave(msg.code))
	case askReadyMsg:
		if msg.id == m.ask.id {
			m.ask.ready = true
		}
	case spinner.TickMsg:
		if m.status == "" && m.preparing == "" && m.doing == "" {
			m.spinning = false // the ticks stop here
			break
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		cmds = append(cmds, cmd)
	case eventsMsg:
		if m.sess != nil && msg.session == m.sess.ID() {
			if msg.batch.Missed > 0 {
				m.view.line(m.view.style(fmt.Sprintf("(%d events of this session were dropped before they could be shown)", msg.batch.Missed), dim))
			}
			m.events(msg.batch.Events)
		}
	case closedMsg:
		if m.sess != nil && msg.session == m.sess.ID() {
			m.running, m.asks, m.status = false, nil, ""
			m.view.line(m.view.style("this session was closed; /reset starts a new one", yellow))
		}
	case memoriesMsg:
		m.memories(msg)
	case preparedMsg:
		m.prepared(msg)
	case trustedMsg:
		m.trusted(msg)
	case rewoundMsg:
		m.rewound(msg)
	case compactedMsg:
		m.compacted(msg)
	case forkedMsg:
		m.forked(msg)
	case tea.KeyPressMsg:
		cmds = append(cmds, m.key(msg))
	case tea.PasteMsg:
		m.leaving = false
		if m.questionPaste(msg) {
			break
		}
		// A paste is never an answer: it goes to the message, at a question
		// too.
		if m.ask.id != "" {
			m.ask.typing = true
		}
		cmds = append(cmds, m.edit(msg))
	default:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg) // the cursor's blink
		cmds = append(cmds, cmd)
	}
	ask := m.syncAsk() // before the lines are taken: it may print what the question is about
	m.print(m.out.take(m.width)...)
	cmds = append(cmds, ask, m.flush(), m.spinCmd())
	return m, tea.Batch(cmds...)
}

// syncAsk follows the question shown: a new one starts its answer afresh
// (and its grace), and what was typed at one that went away (answered
// elsewhere, the run ended) goes to the message being written.
func (m *chatUI) syncAsk() tea.Cmd {
	id := ""
	if len(m.asks) > 0 {
		id = m.asks[0].ID
	}
	if id == m.ask.id {
		return nil
	}
	if m.ask.typed != "" {
		m.toDraft(m.ask.typed)
	}
	m.ask = askState{id: id}
	if id == "" {
		return nil
	}
	m.preview(m.asks[0])
	return tea.Tick(askGrace, func(time.Time) tea.Msg { return askReadyMsg{id: id} })
}

// key handles a key press.
func (m *chatUI) key(msg tea.KeyPressMsg) tea.Cmd {
	if msg.Keystroke() != "ctrl+c" {
		m.leaving = false
	}
	switch msg.Keystroke() {
	case "ctrl+c":
		switch {
		case m.running && m.cancelling:
			return m.leave(130)
		case m.running:
			m.sess.Cancel()
			m.cancelling, m.leaving = true, false
			m.status = "cancelling (Ctrl-C again leaves)"
			return nil
		case len(m.asks) > 0 && m.asks[0].Tool == trustTool:
			return m.answer("no") // the /trust question put away
		case len(m.asks) > 0 && m.asks[0].Tool == rewindTool:
			return m.answer("cancel") // the rewind given up
		case len(m.asks) == 0 && m.input.Value() != "":
			m.input.Reset() // a message given up
			m.input.SetHeight(1)
			m.histPos = len(m.history)
			m.leaving = false
			return nil
		case !m.leaving:
			// One Ctrl-C too many (to cancel a run that had just ended, or
			// to clear a message already gone) must not end the chat: a
			// second one in a row does.
			m.leaving = true
			return nil
		}
		return m.leave(0)
	case "ctrl+d":
		if m.input.Value() == "" && m.ask.typed == "" {
			return m.leave(0)
		}
	case "ctrl+z":
		return tea.Suspend
	case "shift+tab": // Claude Code's key for plan mode
		if len(m.asks) == 0 {
			m.planCommand("")
			return nil
		}
	case "tab":
		if len(m.asks) == 0 && strings.HasPrefix(m.input.Value(), "/") {
			m.complete()
			return nil
		}
		if len(m.asks) == 0 && m.completeImage() {
			return nil
		}
	}
	if len(m.asks) > 0 {
		return m.askKey(msg)
	}
	switch {
	case isEnter(msg):
		text := strings.TrimSpace(m.input.Value())
		if text == "" {
			return nil
		}
		if m.preparing != "" && !isCommand(text) {
			// Sent now, it would overtake the message being prepared.
			m.say(m.view.style("(the images of your last message are still being read: send this one after it)", dim))
			return nil
		}
		m.input.Reset()
		m.input.SetHeight(1)
		if len(m.history) == 0 || m.history[len(m.history)-1] != text {
			m.history = append(m.history, text)
		}
		m.histPos, m.draft = len(m.history), ""
		return m.submit(text)
	case msg.Keystroke() == "up" || msg.Keystroke() == "down":
		if m.input.LineCount() <= 1 && len(m.history) > 0 {
			m.recall(msg.Code == tea.KeyUp)
			return nil
		}
	}
	return m.edit(msg)
}

// edit hands a key or a paste to the input.
func (m *chatUI) edit(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if k, ok := msg.(tea.KeyPressMsg); ok && utf8.RuneCountInString(k.Text) > 1 {
		// Text that came as one key (a grapheme of several runes, or
		// typeahead read in one piece) is text, never the key it might
		// spell: "up" typed is no Up.
		m.input.InsertString(k.Text)
	} else {
		m.input, cmd = m.input.Update(msg)
	}
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 8))
	return cmd
}

// toDraft adds text to the message being written.
func (m *chatUI) toDraft(text string) {
	m.input.CursorEnd()
	m.input.InsertString(text)
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 8))
}

// recall shows the previous (or next) message sent in the input.
func (m *chatUI) recall(up bool) {
	if m.histPos == len(m.history) {
		m.draft = m.input.Value()
	}
	switch {
	case up && m.histPos > 0:
		m.histPos--
	case !up && m.histPos < len(m.history):
		m.histPos++
	default:
		return
	}
	if m.histPos == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[m.histPos])
	}
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 8))
}

// askPrelude is what a key types at a question (approval or a server's),
// and takes the key when the question is not ready yet: keys typed before
// it showed go to the message being written, and an Enter (the message
// was being sent: not while the question is up) ends what was typed, as
// an Enter at the question does.
func (m *chatUI) askPrelude(msg tea.KeyPressMsg) (text string, cmd tea.Cmd, taken bool) {
	a := &m.ask
	a.note = ""
	text = msg.Text
	if msg.Mod&^(tea.ModShift|tea.ModCapsLock|tea.ModNumLock) != 0 {
		text = "" // alt+x, ctrl+x: no text
	}
	if a.ready {
		return text, nil, false
	}
	if isEnter(msg) {
		a.typing = false
		return text, nil, true
	}
	if text != "" {
		a.typing = true
	}
	return text, m.edit(msg), true
}

// askKey handles a key while an approval question is shown. Nothing is
// answered by one key: y, n or a chooses, Enter confirms. Keys typed
// before the question is ready, and text that is no answer, go to the
// message being written.
func (m *chatUI) askKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.asks[0].Tool == questionTool {
		return m.questionKey(msg)
	}
	a := &m.ask
	text, cmd, taken := m.askPrelude(msg)
	if taken {
		return cmd
	}
	switch {
	case isEnter(msg):
		typed, typing := a.typed, a.typing
		a.typed, a.typing = "", false
		said := m.askWord(typed)
		switch {
		case typed == "" && m.asks[0].Tool == rewindTool:
			a.note = "choose k, o or c first"
		case typed == "":
			a.note = "choose y, n or a first"
		case said == "" || typing:
			// A message, or the end of one typed as the question came: it
			// is kept for after the question.
			m.toDraft(typed)
			a.note = "that was taken as part of your message, not as an answer"
		default:
			return m.answer(said)
		}
		return nil
	case msg.Code == tea.KeyEscape:
		a.typed = "n"
		return nil
	case msg.Code == tea.KeyBackspace && a.typed != "":
		_, n := utf8.DecodeLastRuneInString(a.typed)
		a.typed = a.typed[:len(a.typed)-n]
		return nil
	case text != "":
		a.typed += text
		return nil
	}
	return m.edit(msg) // keys that edit: the message, kept under the question
}

// isEnter reports whether msg is Enter (of the keypad too), without a
// modifier: Alt-Enter starts a new line.
func isEnter(msg tea.KeyPressMsg) bool {
	return (msg.Code == tea.KeyEnter || msg.Code == tea.KeyKpEnter) && msg.Mod&^(tea.ModCapsLock|tea.ModNumLock) == 0
}

// askAnswer is the answer typed at a question ("" when it is none).
func askAnswer(typed string) string {
	switch strings.ToLower(strings.TrimSpace(typed)) {
	case "y", "yes":
		return "yes"
	case "n", "no":
		return "no"
	case "a", "always":
		return "always"
	}
	return ""
}

// askWord is the answer typed at the question shown ("" when it is
// none): a rewind's question has its own.
func (m *chatUI) askWord(typed string) string {
	if len(m.asks) > 0 && m.asks[0].Tool == rewindTool {
		return ConflictAnswer(typed)
	}
	return askAnswer(typed)
}

// answer gives the answer said to the oldest approval question.
func (m *chatUI) answer(said string) tea.Cmd {
	req := m.asks[0]
	if req.Tool == rewindTool {
		m.asks = m.asks[1:]
		m.view.line(question(req) + " " + said)
		return m.answerRewind(req, said)
	}
	if req.Tool == trustTool {
		if said == "always" { // not an answer here: trust is given to this content only
			m.say(m.view.style("answer y or n: trust is given to exactly these files, never for always", yellow))
			return nil
		}
		m.asks = m.asks[1:]
		if said == "no" {
			m.view.line(question(req) + " no")
			m.say(m.view.style("not trusted: the workspace's code stays off", dim))
			return nil
		}
		m.view.line(question(req) + " yes")
		return m.grant(m.sess, req.Subject)
	}
	b := m.c.Manager.Approvals()
	if b == nil {
		m.asks = nil
		return nil
	}
	var err error
	switch said {
	case "yes":
		err = b.Approve(req.ID, false)
	case "always":
		err = b.Approve(req.ID, true)
	default:
		err = b.Deny(req.ID, "the user said no")
	}
	m.asks = m.asks[1:]
	m.view.line(question(req) + " " + said)
	if err != nil { // answered elsewhere, or the run ended
		m.view.line(m.view.style("(the request was no longer waiting)", dim))
	}
	return nil
}

// question is how an approval is asked. The tool's name and subject are
// the model's words: their control and format characters are shown, never
// let act on the terminal (a carriage return and an erased line would leave
// a question about another command on screen) or reorder what it reads (a
// bidirectional override).
func question(r server.Request) string {
	switch r.Tool {
	case trustTool:
		return "Trust " + termsafe.Reviewable(r.Title) + "? [y]es/[n]o"
	case rewindTool:
		return rewindQuestion(r)
	case questionTool:
		return questionAsked(r.Title, r.Subject)
	}
	name := r.Tool
	if r.Method != "" {
		name += ":" + r.Method
	}
	subject := firstLineOf(r.Subject)
	if subject != strings.TrimSpace(r.Subject) {
		subject += " …"
	}
	if subject != "" {
		name += " " + cut.Clip(subject, 200)
	}
	return "Allow " + termsafe.Reviewable(name) + "? [y]es/[n]o/[a]lways"
}

// preview prints, above the question about r, what the call would change:
// the diff of a write or patch (see changePreview).
func (m *chatUI) preview(r server.Request) {
	if r.Tool == questionTool {
		m.questionPreview(r)
		return
	}
	if ownQuestion(r) {
		return
	}
	var roots []string
	if m.sess != nil {
		roots = m.sess.Spec().Roots
	}
	for _, l := range changePreview(roots, r.Tool, r.Method, r.Args, m.view.style, previewLines) {
		for _, row := range m.wrap("  " + l) {
			m.view.line(row)
		}
	}
}

// askView is the approval question with the answer being given.
func (m *chatUI) askView() string {
	if m.asks[0].Tool == questionTool {
		return m.questionView()
	}
	var b strings.Builder
	for _, l := range m.wrap(question(m.asks[0])) {
		b.WriteString(m.view.style(l, bold, yellow) + "\n")
	}
	a := m.ask
	switch {
	case !a.ready:
		b.WriteString(m.view.style("…", dim))
	case m.asks[0].Tool == trustTool:
		b.WriteString(m.view.style("y: trust them · n: not now, then Enter", dim))
	case m.asks[0].Tool == rewindTool:
		b.WriteString(m.view.style("k: keep your changes, rewind the rest · o: overwrite them too · c: cancel, then Enter", dim))
	default:
		b.WriteString(m.view.style("y: yes · n: no · a: always, then Enter", dim))
	}
	switch said := m.askWord(a.typed); {
	case a.typed == "":
	case said != "":
		b.WriteString("\nanswer: " + m.view.style(said, bold) + m.view.style(" · Enter confirms", dim))
	default:
		b.WriteString("\nanswer: " + termsafe.Visible(cut.Clip(a.typed, 60)) + m.view.style(" · no answer: Enter keeps it in your message", dim))
	}
	if a.note != "" {
		b.WriteString("\n" + m.view.style(a.note, yellow))
	}
	if m.input.Value() != "" {
		b.WriteString("\n" + m.view.style("your message, kept for after the answer:", dim) + "\n" + m.input.View())
	}
	return b.String()
}

// isCommand reports whether a line typed is a slash command ("//x" is the
// message "/x").
func isCommand(text string) bool {
	return strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//")
}

// submit sends a message (an intervention during a run) or runs a command.
// A message's @words that name image files of the workspace attach them
// (see chatImages): they are read and prepared off the event loop, and the
// message goes once they are; one that cannot be is not sent.
func (m *chatUI) submit(text string) tea.Cmd {
	if isCommand(text) {
		m.view.line(m.view.style("› "+text, dim))
		return m.command(text)
	}
	typed := text
	text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
	if m.sess == nil {
		return nil
	}
	roots := m.roots()
	paths, notes := chatImages(roots, text)
	if len(paths) == 0 {
		m.sendInput(loop.Input{Text: text}, notes, typed)
		return nil
	}
	names := strings.Join(paths, ", ")
	m.preparing = "reading " + termsafe.Visible(cut.Clip(names, 60))
	id := m.sess.ID()
	return func() tea.Msg {
		in, err := attachImages(roots, text, paths)
		return preparedMsg{session: id, typed: typed, in: in, notes: notes, err: err}
	}
}

// preparedMsg is a message whose pictures were read and prepared (or
// could not be: err names the one and says why).
type preparedMsg struct {
	session string
	typed   string // the line as typed, given back when it is not sent
	in      loop.Input
	notes   []string
	err     error
}

// prepared sends a message whose pictures are ready, or says why it is
// not sent and gives the line back to be edited.
func (m *chatUI) prepared(msg preparedMsg) {
	m.preparing = ""
	switch {
	case m.sess == nil || msg.session != m.sess.ID():
		m.say(m.view.style("(not sent: the message with images was written in the session left)", yellow))
		m.giveBack(msg.typed)
	case msg.err != nil:
		m.say(m.view.style("error: not sent: "+termsafe.Visible(msg.err.Error()), red))
		m.giveBack(msg.typed)
	default:
		m.sendInput(msg.in, msg.notes, msg.typed)
	}
}

// giveBack puts a line that was not sent back in the input, unless
// something else is being written there (Up recalls it then).
func (m *chatUI) giveBack(typed string) {
	if m.input.Value() != "" {
		m.say(m.view.style("(Up recalls the message)", dim))
		return
	}
	m.input.SetValue(typed)
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 8))
	m.histPos, m.draft = len(m.history), ""
	m.say(m.view.style("(your message is back in the input, to correct it)", dim))
}

// sendInput sends a message: a run, or an intervention in the one going
// on.
func (m *chatUI) sendInput(in loop.Input, notes []string, typed string) {
	_, intervened, err := m.sess.SendInput(in)
	switch {
	case err != nil:
		m.view.line(m.view.style("error: "+termsafe.Visible(err.Error()), red))
		if server.IsBadAttachment(err) {
			m.giveBack(typed)
		}
	case intervened:
		// Said now, not when the run takes it in at its next checkpoint.
		m.mine = append(m.mine, in.Text)
		m.userLine(in.Text)
		if len(in.Images) > 0 {
			m.view.line(m.view.style(imagesLine("attached", imageRefs(in.Images)), dim))
		}
		m.sayNotes(notes)
		m.view.line(m.view.style("  (sent to the running agent: it reads it at its next step)", dim))
	default:
		// run_started repeats the message: it is printed from there, in
		// order with the run's output (and whichever face sent it), and
		// the notes after it.
		m.running = true
		m.status = "waiting for the model"
		m.notes = notes
	}
}

// sayNotes says what was noticed of a message's @words.
func (m *chatUI) sayNotes(notes []string) {
	for _, n := range notes {
		m.say(m.view.style("  "+n, dim))
	}
}

// roots are the folders of the chat's session: @paths are read there.
func (m *chatUI) roots() []string {
	if m.sess != nil {
		if r := m.sess.Spec().Roots; len(r) > 0 {
			return r
		}
	}
	return []string{m.ws}
}

// completeImage is Tab after an @word at the end of the message: the
// image files and folders of the workspace it may name (see
// completeImage). It reports whether it completed anything.
func (m *chatUI) completeImage() bool {
	text := m.input.Value()
	lines := strings.Split(text, "\n")
	if m.input.Line() != len(lines)-1 || m.input.Column() != utf8.RuneCountInString(lines[len(lines)-1]) {
		return false // the cursor is not at the end
	}
	roots := m.roots()
	done, matches, ok := completeImage(roots[0], text)
	if !ok {
		return false
	}
	m.input.SetValue(done)
	m.input.SetHeight(min(max(m.input.LineCount(), 1), 8))
	if len(matches) > 0 {
		m.say(termsafe.Visible(strings.Join(matches, "  ")))
	}
	return true
}

func (m *chatUI) userLine(text string) {
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		prefix := "› "
		if i > 0 {
			prefix = "  "
		}
		m.view.line(m.view.style(prefix+termsafe.Visible(l), bold))
	}
}

// events shows a batch of the session's events and follows what Zero waits
// for.
func (m *chatUI) events(evs []server.Event) {
	for _, e := range evs {
		switch e.Type {
		case loop.EventRunStarted:
			m.running, m.cancelling, m.leaving = true, false, false
			m.userLine(e.Text)
		case loop.EventIntervention:
			if i := slices.Index(m.mine, e.Text); i >= 0 {
				m.mine = slices.Delete(m.mine, i, i+1)
				e.Images = nil // said when it was sent
			} else { // sent by another face
				m.userLine(e.Text)
			}
		case server.EventApprovalRequested:
			if !slices.ContainsFunc(m.asks, func(r server.Request) bool { return r.ID == e.Text }) {
				m.asks = append(m.asks, m.approvalRequest(e))
			}
		case server.EventQuestionRequested, server.EventQuestionResolved:
			m.questionEvent(e)
		case server.EventApprovalResolved:
			n := len(m.asks)
			m.asks = slices.DeleteFunc(m.asks, func(r server.Request) bool { return r.ID == e.Text })
			if len(m.asks) < n && e.Status != server.ApprovalCancelled {
				m.view.line(m.view.style(fmt.Sprintf("(%s was %s elsewhere)", e.Tool, e.Status), dim))
			}
		}
		// Only a command's output may rewrite its line (\r); the rest
		// shows every control character.
		m.out.output = e.Type == loop.EventToolOutputDelta
		m.view.event(e)
		m.out.output = false
		switch e.Type {
		case loop.EventRunStarted:
			m.sayNotes(m.notes)
			m.notes = nil
		case loop.EventRunEnded:
			m.running, m.cancelling, m.mine = false, false, nil
			// The run's approvals went with it; the chat's own questions
			// (/trust, a rewind's) stay.
			m.asks = slices.DeleteFunc(m.asks, func(r server.Request) bool { return !ownQuestion(r) })
			switch e.StopReason {
			case loop.StopCancelled:
				m.view.line(m.view.style(cmp.Or(termsafe.Visible(e.Error), "cancelled"), yellow))
			case loop.StopError:
				// Said once: the error event was shown already.
				if e.Error != "" && e.Error != m.view.lastError {
					m.view.line(m.view.style("error: "+e.Error, red))
					m.view.lastError = e.Error
				}
			case loop.StopBudget:
				m.view.line(m.view.style("stopped: "+termsafe.Visible(e.Error), yellow))
			}
			if e.Usage != nil {
				m.view.line(m.view.style(runUsage(e.Usage), dim))
			}
		case loop.EventToolOutputDelta:
			m.sandboxUp = true
		case loop.EventToolResult:
			if e.Tool == "code_execution_tool" {
				m.sandboxUp = true
			}
		}
		if !m.cancelling {
			if s, ok := m.waitingFor(e); ok {
				m.status = s
			}
		}
	}
}

// waitingFor says what Zero waits for after event e ("" for nothing: output
// arrived); false leaves it as it was.
func (m *chatUI) waitingFor(e server.Event) (string, bool) {
	switch e.Type {
	case loop.EventRunStarted, loop.EventTurnStarted, loop.EventIntervention, loop.EventSubordinateStarted, loop.EventSubordinateEnded:
		return "waiting for the model", true
	case loop.EventHeadline:
		return termsafe.Visible(firstLineOf(e.Text)), true // the model writes the tool call
	case loop.EventToolStarted:
		switch {
		case e.Tool == "code_execution_tool" && m.docker && !m.sandboxUp:
			return "starting the sandbox", true
		case e.Tool == "code_execution_tool":
			return "running the command", true
		case e.Tool == "call_subordinate", e.Tool == "response":
			return "", true
		}
		return "running " + termsafe.Visible(e.Tool), true
	case loop.EventToolResult:
		if e.Tool == "response" {
			return "", true
		}
		return "waiting for the model", true
	case server.EventSandboxPull:
		// The pull's progress, replaced in place; the scrollback has a
		// line when it starts and one when it ends.
		switch e.Status {
		case server.PullPulling:
			return termsafe.Visible(e.Text), true
		case server.PullDone:
			return "starting the sandbox", true
		}
		return "", true
	case loop.EventReasoningDelta, loop.EventThoughtsDelta, loop.EventResponseDelta, loop.EventResponse,
		loop.EventToolCall, loop.EventToolOutputDelta, loop.EventRunEnded, loop.EventError, server.EventApprovalRequested:
		return "", true
	}
	return "", false
}

// approvalRequest is the request an approval_requested event announces:
// the broker's, with the whole subject, while it waits.
func (m *chatUI) approvalRequest(e server.Event) server.Request {
	if b := m.c.Manager.Approvals(); b != nil {
		for _, r := range b.Pending(e.Session) {
			if r.ID == e.Text {
				return r
			}
		}
	}
	return requestOf(e)
}

// spinCmd starts the spinner's ticks when there is something to wait for
// and they are not going.
func (m *chatUI) spinCmd() tea.Cmd {
	if (m.status == "" && m.preparing == "" && m.doing == "") || m.spinning {
		return nil
	}
	m.spinning = true
	return m.spin.Tick
}

// View implements tea.Model.
func (m *chatUI) View() tea.View {
	return tea.NewView(m.content())
}

// content is what the prompt area shows.
func (m *chatUI) content() string {
	if m.quitting {
		return ""
	}
	var b strings.Builder
	if part := m.out.view(); part != "" {
		b.WriteString(part + "\n")
	}
	if (m.status != "" || m.preparing != "" || m.doing != "") && len(m.asks) == 0 {
		status := m.status
		switch {
		case m.preparing != "":
			status = m.preparing // the images of the message being sent
		case m.doing != "":
			status = m.doing // a rewind, a compaction
		case m.running && !m.cancelling && m.sess != nil && m.sess.Paused():
			status = "paused" // the run waits at its next step, not for the model
		}
		b.WriteString(m.spin.View() + " " + m.view.style(status+"…", dim) + "\n")
	}
	if len(m.asks) > 0 {
		b.WriteString(m.askView())
		return b.String()
	}
	b.WriteString(m.input.View())
	hint := m.view.style("Enter sends · /help · Ctrl-D leaves", dim)
	switch {
	case m.running && m.sess != nil && m.sess.Paused():
		hint = m.view.style("the agent is paused before its next step: /resume lets it go on · Ctrl-C cancels the run", yellow)
	case m.running:
		hint = m.view.style("the agent is working: a message you send now goes to it · Ctrl-C cancels the run", dim)
	case m.leaving:
		hint = m.view.style("press Ctrl-C again to leave", yellow)
	case m.sess != nil && m.sess.Mode() == server.ModePlan:
		hint = m.view.style("plan mode: the agent changes nothing · Shift-Tab leaves it · /act leaves it and has the plan carried out", yellow)
	}
	b.WriteString("\n" + hint)
	return b.String()
}

// print queues lines to go above the prompt area.
func (m *chatUI) print(lines ...string) { m.queue = append(m.queue, lines...) }

// flush hands the queued lines to Bubble Tea. A print command runs on a
// goroutine of its own, so two could overtake each other: one is on its
// way at a time, and the next waits for its printedMsg.
func (m *chatUI) flush() tea.Cmd {
	switch {
	case m.printing:
		return nil
	case len(m.queue) > 0:
		text := strings.Join(m.queue, "\n")
		m.queue, m.printing = nil, true
		return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
	case m.quitting:
		return tea.Quit
	}
	return nil
}

// leave ends the chat once everything is printed; a run going on is
// cancelled (the host closes its session).
func (m *chatUI) leave(code int) tea.Cmd {
	if m.running && m.sess != nil {
		m.sess.Cancel()
	}
	m.print(m.out.end()...)
	m.quitting, m.code = true, code
	return nil // Update flushes, then quits
}

// command runs a slash command.
func (m *chatUI) command(text string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	arg = strings.TrimSpace(arg)
	say := m.say
	busy := func() bool {
		if m.running {
			say(m.view.style("a run is going on: wait for it to end, or Ctrl-C to cancel it", yellow))
		}
		return m.running
	}
	switch name {
	case "help", "?":
		for _, l := range strings.Split(chatHelp, "\n") {
			say(l)
		}
		m.savedHelp()
	case "exit", "quit", "q":
		return m.leave(0)
	case "reset", "new", "clear":
		if busy() {
			return nil
		}
		spec := server.SessionSpec{Roots: []string{m.ws}}
		if m.sess != nil {
			old := m.sess.Spec()
			spec.Profile, spec.Model = old.Profile, old.Model
		}
		sess, err := m.c.Manager.Create(m.ctx, spec)
		if err != nil {
			say(m.view.style("error: "+err.Error(), red))
			return nil
		}
		old := m.sess
		m.attach(sess, false)
		m.release(old)
		say(m.view.style("a new conversation: the agent starts afresh", dim))
	case "profile":
		m.profileCommand(arg, busy)
	case "plan":
		m.planCommand(arg)
	case "act":
		if m.sess == nil || busy() {
			return nil
		}
		if err := m.sess.SetMode(server.ModeDefault); err != nil {
			say(m.view.style("error: "+err.Error(), red))
			return nil
		}
		return m.submit(server.ActMessage)
	case "pause":
		if m.sess == nil {
			return nil
		}
		m.sess.Pause()
		say(m.view.style("paused: the agent stops before its next model call; /resume lets it go on", dim))
	case "resume":
		if m.sess == nil || !m.sess.Paused() {
			say("the agent is not paused")
			return nil
		}
		m.sess.Resume()
		say(m.view.style("resumed", dim))
	case "memory":
		return m.memoryCommand(arg)
	case "undo":
		return m.undoCommand(arg)
	case "rewind":
		return m.rewindCommand(arg)
	case "compact":
		return m.compactCommand(arg, busy)
	case "fork":
		return m.forkCommand(arg)
	case "trust":
		m.trustCommand()
	case "sessions":
		m.sessionsCommand()
	case "cost", "usage":
		if m.sess == nil {
			say("no session yet")
			return nil
		}
		say(fmt.Sprintf("session %s:", m.sess.ID()))
		for _, l := range UsageLines(m.sess.Info().Usage) {
			say("  " + l)
		}
	case "load":
		if arg == "" {
			say("/load ID: which session? /sessions lists them")
			return nil
		}
		if busy() {
			return nil
		}
		id, err := m.sessionID(arg)
		if err != nil {
			say(m.view.style("error: "+err.Error(), red))
			return nil
		}
		if m.sess != nil && id == m.sess.ID() {
			say(m.view.style("that is this session", dim))
			return nil
		}
		sess, err := m.c.Manager.Get(id)
		if errors.Is(err, server.ErrNotFound) {
			say(m.view.style(fmt.Sprintf("error: no session is %q or starts with it; /sessions lists those of this workspace", termsafe.Visible(arg)), red))
			return nil
		}
		if err != nil {
			say(m.view.style("error: "+err.Error(), red))
			return nil
		}
		old := m.sess
		m.attach(sess, true)
		m.release(old)
	default:
		if m.sess != nil {
			if _, ok, err := m.sess.SendCommand(name, arg); ok {
				if err != nil {
					say(m.view.style("error: "+err.Error(), red))
					return nil
				}
				m.running = true
				m.status = "waiting for the model"
				return nil
			}
		}
		say(m.view.style(fmt.Sprintf("unknown command /%s: /help lists them (//%s sends the text as a message)", termsafe.Visible(name), termsafe.Visible(name)), yellow))
	}
	return nil
}

// savedHelp lists the workspace's and the user's saved commands for /help.
func (m *chatUI) savedHelp() {
	if m.sess == nil {
		return
	}
	cmds := m.sess.Commands()
	if len(cmds) == 0 {
		return
	}
	m.say("Saved commands (files in .zero/commands, .claude/commands and yours):")
	for _, c := range cmds {
		m.say(termsafe.Visible(fmt.Sprintf("  /%-16s %s (%s)", strings.TrimSpace(c.Name+" "+c.Hint), c.Description, c.Source)))
	}
}

// chatCommands are the chat's own command names, for Tab.
var chatCommands = []string{"help", "exit", "reset", "profile", "plan", "act", "pause", "resume", "trust", "memory", "undo", "rewind", "compact", "fork", "sessions", "cost", "load"}

// complete is Tab in a "/na" prompt: the command's name completed when
// one matches, else as far as the matches agree, which are listed.
func (m *chatUI) complete() {
	text := m.input.Value()
	prefix, ok := strings.CutPrefix(text, "/")
	if !ok || strings.ContainsAny(prefix, " \n") || strings.HasPrefix(prefix, "/") {
		return
	}
	names := slices.Clone(chatCommands)
	if m.sess != nil {
		for _, c := range m.sess.Commands() {
			names = append(names, c.Name)
		}
	}
	var match []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 0:
		return
	case 1:
		m.input.SetValue("/" + match[0] + " ")
		return
	}
	common := match[0]
	for _, n := range match[1:] {
		for !strings.HasPrefix(n, common) {
			common = common[:len(common)-1]
		}
	}
	m.input.SetValue("/" + common)
	m.say(termsafe.Visible("/" + strings.Join(match, "  /")))
}

// release closes a session the chat left (/reset, /load), so that another
// zero process can open it; it stays stored, and /load opens it again.
// Without a store it stays open: closing would lose it.
func (m *chatUI) release(old *server.Session) {
	if old == nil || !m.c.Persistent || (m.sess != nil && old.ID() == m.sess.ID()) {
		return
	}
	if err := m.c.Manager.Close(old.ID()); err != nil && !errors.Is(err, server.ErrNotFound) {
		m.c.Logger.Warn("closing the session left", "session", old.ID(), "err", err)
	}
}

const chatHelp = `Type a message and press Enter; while the agent works, a message you send is given to it at its next step.
@shot.png in a message attaches that image of the workspace (PNG, JPEG, GIF, WebP, BMP; @"my shot.png" for a name with spaces).
  /reset            a new session: the agent starts afresh
  /profile [NAME]   switch this session's profile, or show the current one and the others
  /plan [on|off]    plan mode: the agent reads and thinks, changes nothing, and answers with a plan
  /act              leave plan mode and have the plan carried out
  /pause            hold the agent before its next model call
  /resume           let a paused agent go on
  /trust            review the workspace's code (extensions, tools) and trust exactly those files
  /memory [QUERY]   the agent's newest memories of this workspace, or those about QUERY
  /undo             take back the last run: the files it changed (by tools or commands) and its part of the conversation
  /rewind [N]       list the checkpoints (one before each run), or go back to before checkpoint N's run;
                    /rewind N files or /rewind N conversation takes back only that; a rewind that finds files you
                    changed since asks whether to keep them (/undo keep or /rewind N keep: without asking)
  /compact [FOCUS]  summarise the conversation now, FOCUS saying what the summary should keep; /undo takes it back
  /fork [RUN]       a new session holding this conversation up to run RUN (all by default), to go on with apart
  /sessions         the sessions of this workspace
  /cost             what this session's model calls used: tokens, cached share, cost, by role
  /load ID          switch to a session (an id prefix is enough) and show its conversation
  /help             this help
  /exit             leave (so do Ctrl-D at an empty prompt, and Ctrl-C twice at an empty prompt)
Keys: Enter sends · Alt-Enter or Ctrl-J: new line · Up/Down: earlier messages · Tab: completes a /command or an @image · Shift-Tab: plan mode on/off · Ctrl-C cancels the run
(twice: leaves), clears what you typed, or at an empty prompt asks for a second one to leave · Ctrl-Z suspends
When the agent asks before a tool runs, answer y (yes), n (no) or a (always, for the rest of the session),
then Enter; what you type in the moment the question comes up stays in your message.`

// say prints a line of the chat's own, wrapped at the terminal's width.
func (m *chatUI) say(s string) {
	for _, l := range m.wrap(s) {
		m.view.line(l)
	}
}

// wrap cuts s into rows of the terminal's width, at spaces where it can.
func (m *chatUI) wrap(s string) []string {
	if m.width > 0 {
		s = ansi.Wrap(s, m.width, "")
	}
	return strings.Split(s, "\n")
}

// planCommand turns plan mode on ("on"), off ("off") or over (""); the
// mode_changed event says it (to every face following the session).
func (m *chatUI) planCommand(arg string) {
	if m.sess == nil {
		return
	}
	mode, err := server.PlanSwitch(m.sess.Mode(), arg)
	if err != nil {
		m.say(err.Error())
		return
	}
	if err := m.sess.SetMode(mode); err != nil {
		m.say(m.view.style("error: "+err.Error(), red))
	}
}

func (m *chatUI) profileCommand(arg string, busy func() bool) {
	say := m.say
	if arg == "" {
		cur := m.profileOf(m.sess)
		say("profile " + m.view.style(cur, bold) + "; the profiles:")
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, p := range m.c.Catalog.Profiles() {
			mark := "  "
			if p.ID == cur {
				mark = "* "
			}
			fmt.Fprintf(tw, "%s%s\t%s\n", mark, p.ID, firstLineOf(p.Description))
		}
		tw.Flush()
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if m.width > 1 {
				l = ansi.Truncate(l, m.width-1, "…")
			}
			m.view.line(l)
		}
		return
	}
	if m.sess == nil || busy() {
		return
	}
	var ids []string
	for _, p := range m.c.Catalog.Profiles() {
		ids = append(ids, p.ID)
	}
	if len(ids) > 0 && !slices.Contains(ids, arg) {
		say(m.view.style(fmt.Sprintf("error: no profile %q; the profiles are: %s (/profile says what each is for)", termsafe.Visible(arg), strings.Join(ids, ", ")), red))
		return
	}
	if err := m.sess.Configure(m.ctx, arg, ""); err != nil {
		say(m.view.style("error: "+err.Error(), red))
		return
	}
	say(m.view.style("profile "+arg+" from the next message on", dim))
}

// profileOf is the profile a session's agent 0 has.
func (m *chatUI) profileOf(sess *server.Session) string {
	if sess != nil {
		if p := sess.Spec().Profile; p != "" {
			return p
		}
	}
	profile, _, _ := m.c.Host.Defaults(m.ws)
	return profile
}

func (m *chatUI) sessionsCommand() {
	infos := WorkspaceSessions(m.c.Manager.List(), m.ws)
	if len(infos) == 0 {
		m.view.line("no sessions in this workspace yet")
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tUPDATED\tRUNS\tTITLE")
	now := time.Now()
	for _, in := range infos {
		mark := "  "
		if m.sess != nil && in.ID == m.sess.ID() {
			mark = "* "
		}
		title := cmp.Or(termsafe.Visible(in.Title), "(no message yet)")
		if in.Running {
			title += " (running)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%d\t%s\n", mark, in.ID, ago(now, in.Updated), in.Runs, title)
	}
	tw.Flush()
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if m.width > 1 {
			l = ansi.Truncate(l, m.width-1, "…")
		}
		m.view.line(l)
	}
}

// sessionID resolves an id prefix among the workspace's sessions (see
// sessionByPrefix).
func (m *chatUI) sessionID(arg string) (string, error) {
	return SessionByPrefix(WorkspaceSessions(m.c.Manager.List(), m.ws), arg)
}

// transcript is a session's conversation as it happened, shown as the
// live view showed it: the user's messages, each tool call with its
// approval question and the answer given, its result (a refusal, a
// failure, a cancel), warnings, errors and the answers. What only helped
// to watch it (reasoning, thoughts, the answer's stream) is left out, a
// command's output is cut to its first lines, and only the last runs are
// shown (zero sessions show has them all).
func (m *chatUI) transcript(info server.Info, evs []server.Event) []string {
	const keepRuns = 10
	evs = server.Coalesce(evs)
	var starts []int
	for i, e := range evs {
		if e.Type == loop.EventRunStarted {
			starts = append(starts, i)
		}
	}
	runs := fmt.Sprintf("%d runs", info.Runs)
	if info.Runs == 1 {
		runs = "1 run"
	}
	out := []string{m.view.style(fmt.Sprintf("session %s: %s (%s, updated %s)", info.ID, cmp.Or(termsafe.Visible(info.Title), "no message yet"), runs, ago(time.Now(), info.Updated)), dim)}
	if n := len(starts) - keepRuns; n > 0 {
		out = append(out, m.view.style(fmt.Sprintf("… %d earlier runs (zero sessions show %s has them all)", n, info.ID), dim))
		evs = evs[starts[n]:]
	}
	lines := &chatLines{}
	r := newRenderer(lines, m.color)
	asked := map[string]server.Request{}
	for _, e := range evs {
		switch e.Type {
		case loop.EventReasoningDelta, loop.EventThoughtsDelta, loop.EventResponseDelta, server.EventSandboxPull:
			continue
		case loop.EventRunStarted, loop.EventIntervention:
			for i, l := range strings.Split(strings.TrimRight(e.Text, "\n"), "\n") {
				prefix := "› "
				if i > 0 {
					prefix = "  "
				}
				r.line(r.style(prefix+termsafe.Visible(l), bold))
			}
			if len(e.Images) > 0 {
				r.line(r.style(imagesLine("attached", e.Images), dim))
			}
			continue
		case loop.EventToolOutputDelta:
			e.Text = clipOutput(e.Text, 10)
		case server.EventApprovalRequested:
			asked[e.Text] = requestOf(e)
			continue
		case server.EventQuestionRequested, server.EventQuestionResolved:
			if l, ok := replayQuestion(e, asked); ok {
				r.line(l)
			}
			continue
		case server.EventApprovalResolved:
			req, ok := asked[e.Text]
			if !ok {
				req = server.Request{Tool: e.Tool, Method: e.Method}
			}
			switch e.Status {
			case server.ApprovalApproved:
				r.line(question(req) + " yes")
			case server.ApprovalDenied:
				r.line(question(req) + " no")
			default:
				r.line(question(req) + r.style(" (not answered: the run ended first)", dim))
			}
			continue
		}
		lines.output = e.Type == loop.EventToolOutputDelta
		r.event(e)
		lines.output = false
		if e.Type == loop.EventRunEnded {
			switch e.StopReason {
			case loop.StopCancelled:
				r.line(r.style(cmp.Or(termsafe.Visible(e.Error), "cancelled"), yellow))
			case loop.StopError:
				if msg := termsafe.Visible(e.Error); msg != "" && msg != r.lastError {
					r.line(r.style("error: "+msg, red))
					r.lastError = msg
				}
			case loop.StopBudget:
				r.line(r.style("stopped: "+termsafe.Visible(e.Error), yellow))
			}
			if e.Usage != nil {
				r.line(r.style(runUsage(e.Usage), dim))
			}
		}
	}
	out = append(out, lines.take(m.width)...)
	return append(out, lines.end()...)
}

// clipOutput keeps the first n lines of a command's output, saying how many
// more there were.
func clipOutput(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… (%d more lines)\n", len(lines)-n)
}

// requestOf is the request an approval_requested event announces, as far
// as the event tells it (the title is "tool: subject", the subject
// clipped).
func requestOf(e server.Event) server.Request {
	r := server.Request{ID: e.Text, Session: e.Session, Agent: e.Agent, Item: e.Item, Tool: e.Tool, Method: e.Method, Title: server.ApprovalTitle(e)}
	_ = json.Unmarshal(e.Args, &r.Args) // the call's arguments: nil when there are none
	if _, subject, ok := strings.Cut(r.Title, ": "); ok {
		r.Subject = subject
	}
	return r
}

// ago says how long ago t was, for listings.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case now.Year() == t.Year():
		return t.Local().Format("Jan 2 15:04")
	}
	return t.Local().Format("2006-01-02")
}

// memoriesMsg is the answer to /memory.
type memoriesMsg struct {
	query string
	list  []server.MemoryInfo
	err   error
}

// memoryCommand is /memory [query], as ACP's: the newest memories of the
// session's workspace and the user's, or the most relevant to query. The
// search may take a while (it can embed the query), so it runs off the
// event loop and its answer comes back as a memoriesMsg.
func (m *chatUI) memoryCommand(query string) tea.Cmd {
	mgr, ctx, ws := m.c.Manager, m.ctx, m.ws
	if m.sess != nil {
		if roots := m.sess.Spec().Roots; len(roots) > 0 {
			ws = roots[0]
		}
	}
	return func() tea.Msg {
		list, err := mgr.Memories(ctx, server.MemoryQuery{Workspace: ws, Query: query, Limit: 20})
		return memoriesMsg{query: query, list: list, err: err}
	}
}

// memories shows the answer to /memory. The texts are the agent's: their
// control characters show.
func (m *chatUI) memories(msg memoriesMsg) {
	switch {
	case msg.err != nil:
		m.say(m.view.style("error: could not read the memory: "+msg.err.Error(), red))
		return
	case len(msg.list) == 0 && msg.query != "":
		m.say(fmt.Sprintf("no memory about %q", termsafe.Visible(msg.query)))
		return
	case len(msg.list) == 0:
		m.say("the agent remembers nothing yet for this workspace")
		return
	}
	for _, mem := range msg.list {
		l := m.view.style(termsafe.Visible(mem.ID), bold) + m.view.style(fmt.Sprintf(" (%s, %s memory, %s)", termsafe.Visible(mem.Area), termsafe.Visible(mem.Scope), termsafe.Visible(mem.Timestamp)), dim) +
			" " + termsafe.Visible(cut.Clip(strings.Join(strings.Fields(mem.Text), " "), 300))
		if m.width > 1 {
			l = ansi.Truncate(l, m.width-1, "…")
		}
		m.view.line(l)
	}
}

// trustTool is the Tool of the chat's own question of /trust among the
// approval questions: a person's answer at this terminal is the only way
// it is granted.
const trustTool = "/trust"

// trustCommand is /trust, as ACP's: it shows the workspace's code that is
// off and asks whether to trust exactly those files; the answer (y or n,
// then Enter) grants the digest shown, nothing else.
func (m *chatUI) trustCommand() {
	if m.sess == nil {
		return
	}
	ts, ok, err := m.sess.TrustState()
	switch {
	case !ok:
		m.say("this chat keeps no workspace trust")
		return
	case err != nil:
		m.say(m.view.style("error: could not read the workspace's code: "+err.Error(), red))
		return
	case ts.Status == server.TrustNone:
		m.say("this workspace carries no code that Zero would run: there is nothing to trust")
		return
	case ts.Status == server.TrustTrusted:
		m.say(fmt.Sprintf("this workspace's code is trusted already (%s):", filesCount(len(ts.Files))))
		m.trustFiles(ts)
		return
	}
	id := "trust:" + ts.Digest
	if slices.ContainsFunc(m.asks, func(r server.Request) bool { return r.ID == id }) {
		return // asked already: the question is up
	}
	if ts.Message != "" {
		m.say(m.view.style(termsafe.Visible(ts.Message), yellow))
	}
	if !m.reviewTrust(ts) {
		m.trustFiles(ts)
	}
	m.say(m.view.style("Trusting runs exactly these files on this machine; any later change turns them off again.", dim))
	m.asks = append(m.asks, server.Request{ID: id, Tool: trustTool, Session: m.sess.ID(),
		Subject: ts.Digest, Title: fmt.Sprintf("%s of %s", filesCount(len(ts.Files)), ts.Workspace)})
}

// reviewTrust shows the files a /trust question asks about as zero trust
// does: each one's content, or its diff against the copy kept when it was
// last trusted (see ReviewCode). It reports false when the workspace's
// code is no longer the one ts names (the question would not grant it) or
// cannot be read.
func (m *chatUI) reviewTrust(ts server.TrustState) bool {
	var b strings.Builder
	if !m.c.Host.ReviewTrust(&b, m.ws, ts.Digest) {
		return false
	}
	for _, l := range strings.Split(strings.Trim(b.String(), "\n"), "\n") {
		m.say(l)
	}
	return true
}

// trustFiles lists the files of a trust state: path, kind, and what
// changed since they were last trusted.
func (m *chatUI) trustFiles(ts server.TrustState) {
	for _, f := range ts.Files {
		l := "  " + termsafe.Reviewable(f.Path)
		switch {
		case f.Change != "":
			l += m.view.style(" ("+f.Change+")", yellow)
		case f.Point != "":
			l += m.view.style(" ("+f.Kind+" at "+f.Point+")", dim)
		case f.Kind != "":
			l += m.view.style(" ("+f.Kind+")", dim)
		}
		m.say(l)
	}
}

// trustedMsg is the outcome of trusting the files a /trust question showed.
type trustedMsg struct {
	st  server.TrustState
	err error
}

// grant trusts the digest the person was shown; it reloads the session's
// extensions, so it runs off the event loop.
func (m *chatUI) grant(sess *server.Session, digest string) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		st, err := sess.GrantTrust(ctx, digest)
		return trustedMsg{st: st, err: err}
	}
}

func (m *chatUI) trusted(msg trustedMsg) {
	switch {
	case errors.Is(msg.err, server.ErrTrustMoved):
		m.say(m.view.style("not trusted: the files changed while you were asked; /trust shows them again", yellow))
	case msg.err != nil:
		m.say(m.view.style("error: could not trust: "+msg.err.Error(), red))
	default:
		m.say(m.view.style(fmt.Sprintf("trusted %s of %s: they run from the next message on; any change to them turns them off again", filesCount(len(msg.st.Files)), msg.st.Workspace), green))
	}
}

// filesCount says how many files, for people.
func filesCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
