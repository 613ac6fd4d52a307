package loop_test

import (
	"testing"

	"github.com/zeroagent/zero/loop"
)

// The headline goes out once, whole, however the reply is chunked: faces
// show it as a step's title.
func TestHeadlineEmittedWhole(t *testing.T) {
	t.Parallel()
	for _, chunk := range []int{1, 3, 7, 1000} {
		model := &fakeModel{replies: []reply{{content: `{"thoughts": ["x"], "headline": "Running the tests", "tool_name": "response", "tool_args": {"text": "ok"}}`, chunk: chunk}}}
		sess, rec := newSession(t, setup{model: model})
		if _, err := sess.Run(runCtx(t), "go"); err != nil {
			t.Fatal(err)
		}
		hl := rec.ofType(loop.EventHeadline)
		if len(hl) != 1 || hl[0].Text != "Running the tests" {
			t.Errorf("chunks of %d: headline events = %+v", chunk, hl)
		}
	}
}
