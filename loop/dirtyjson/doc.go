// Package dirtyjson reads the one JSON object a model answers with, however dirty it is, and reads it
// incrementally so the engine can stream fields while the reply is still arriving and stop the stream as
// soon as the object is closed.
//
// It plays the role of Agent Zero's DirtyJson (helpers/dirty_json.py) together with
// extract_json_root_string (helpers/extract_tools.py), but it is its own design: a byte-driven state
// machine that keeps the input it has consumed so that every decision needing lookahead (a comment after
// '/', a triple quote, a \u escape and its surrogate partner) simply waits for more bytes instead of
// guessing. As a result the outcome never depends on where the chunk boundaries fall.
//
// # What is accepted
//
//   - Anything before the first '{' is skipped (prose, ```json fences, even a '[': Agent Zero gives up when
//     a '[' comes first, we still take the first object). The root is therefore always an object.
//   - Comments: // to the end of the line and /* ... */, wherever whitespace may appear.
//   - Strings in "double", 'single' or `back-tick` quotes, with raw newlines and tabs kept. Escapes:
//     the JSON ones (\" \\ \/ \b \f \n \r \t \uXXXX with surrogate pairs), plus \' and \` . An invalid
//     \u escape (fewer than four hex digits) is kept literally; so is any other unknown escape such as
//     \d or \U, backslash included (Agent Zero drops both characters; keeping them preserves regular
//     expressions and Windows paths). Lone surrogates become U+FFFD, as with encoding/json.
//   - Triple-quoted values (three single quotes, double quotes or back-ticks), read raw up to the
//     closing triple and trimmed of ASCII whitespace at both ends, as Agent Zero does.
//   - Unquoted keys, ending at whitespace, ':', ',', '{', '[', '}' or ']'.
//   - Unquoted values: a token read up to ',', '}', ']' or the end of the line (a ':' does not end it,
//     so "http://x" and "Note: y" survive; Agent Zero cuts at ':' and also swallows the delimiter,
//     so it cannot close an object whose last value is unquoted). Trailing whitespace is trimmed and a
//     " //" or " /*" starts a comment. In an array, a token that spells a number or a literal ends at
//     a blank, so [1 2 3] has three numbers. In an object, such a token ends there only if a quote,
//     '{' or '[' follows the blanks, so `{"a": true "b": 1}` has two keys; otherwise the blanks belong
//     to the token and `{"a": 10 apples}` gives "10 apples".
//   - Literals in any letter case: true, false, null, none, undefined (the last three give nil).
//   - Numbers (always float64, like encoding/json into any) with a leading '+', "1.", ".5", "-0", leading
//     zeros and exponents. A number token that is out of float64 range, or longer than 256 bytes, is
//     kept as its literal string rather than becoming ±Inf; a token that merely looks numeric
//     ("1.2.3", "2024-01-01") is a string.
//   - Missing colons ({"a" 1}), missing commas, trailing and repeated commas, stray colons.
//   - Mismatched closers: '}' closes everything up to the innermost object, ']' everything up to the
//     innermost array (a ']' with no open array is ignored).
//   - Doubled braces: a '{' where the first key of an object is expected makes that object a wrapper
//     around the inner one, so {{"tool_name": "x", "tool_args": {"a": 1}}} is the inner object (Agent
//     Zero reads the key as `tool_name"`). After the inner object's '}', as many extra '}' as there were
//     extra '{' are consumed if they follow (blanks and comments may come between); if something else
//     follows, the wrapper is closed implicitly. For the root this means Done is reported at the
//     wrapper's '}', or at the first other significant byte after the inner '}'. A '{' or '[' where a
//     key is expected in an object that already has keys is kept as the value of the key "".
//   - Truncation at any byte: the value read so far is returned and Done is false. A key appears only
//     once it is complete (with a nil value until its value starts); a value appears as soon as it
//     starts, and a string grows as it is read, never ending in half a UTF-8 sequence.
//   - Text after the root's closing brace is ignored, so of two concatenated objects the first wins.
//   - Duplicate keys: the last one wins.
//
// Bytes are kept as they are: invalid UTF-8 and NUL bytes pass through unchanged (encoding/json, and so
// [Canonical], turns invalid UTF-8 into U+FFFD when encoding). Whitespace between tokens is ASCII
// whitespace plus any Unicode space and U+FEFF. Nesting deeper than [MaxDepth] halts the parser: the value
// read so far stays, Done is false, and later input is ignored.
package dirtyjson
