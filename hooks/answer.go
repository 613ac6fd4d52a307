package hooks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// UnmarshalAnswer is a helper for [Payload.ApplyScript]: it decodes each field of the JSON object
// answer into the target fields names (a pointer, as for json.Unmarshal), and fails with
// [ErrFieldNotAllowed] for a field the point does not list. Decode into temporaries and apply them only
// when it returns nil, so a rejected answer changes nothing.
func UnmarshalAnswer(answer json.RawMessage, fields map[string]any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(answer, &raw); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		target, ok := fields[k]
		if !ok {
			return fmt.Errorf("%w: %q (allowed: %v)", ErrFieldNotAllowed, k, slices.Sorted(maps.Keys(fields)))
		}
		if err := json.Unmarshal(raw[k], target); err != nil {
			return fmt.Errorf("answer field %q: %w", k, err)
		}
	}
	return nil
}
