// Package secrets keeps secret values away from the model, the editor and
// the logs, as Agent Zero's helpers/secrets.py does.
//
// The user keeps secrets in secrets.env (dotenv syntax) in Zero's config
// directory, and a trusted workspace may add its own in .zero/secrets.env;
// [Load] reads them. The model sees only their names, as aliases
// §§secret(NAME) in the system prompt ([Set.Prompt]). When a tool is about
// to run, [Set.Expand] puts the values in place of the aliases in its
// arguments; everything that comes back, and everything that is shown,
// stored or logged, goes through [Set.Mask] (whole texts), [Stream] (text
// that arrives in chunks, where a value may be split across chunks) or
// [NewHandler] (log records), which replace each value by its alias.
// Zero's own keys are masked too ([Set.With]) without being offered to the
// agent.
//
// # Choices
//
// Names are case-insensitive and shown upper-case, as Agent Zero's
// alias_for_key does: API_key= in a file, §§secret(api_key) from the model
// and §§secret(API_KEY) in masked text all mean the same secret.
//
// Values shorter than [MinMasked] (4) bytes, once trimmed of white space,
// are substituted but never masked: masking "1" or "dev" would rewrite
// ordinary text everywhere. Such a value is not protected in output.
//
// A value replaced by a later file or by With stays masked: a workspace
// redefining a user's secret must not unmask the user's value.
//
// Overlapping values: the longest occurrence wins over those inside it,
// and occurrences that merely overlap are each replaced, so no byte of any
// occurrence stays in clear. Agent Zero replaces values one after another,
// longest first, which can leave the tail of an overlapping value in clear
// and can match a short value inside an alias it has just written.
//
// Streams hold back any tail that could still grow into a value, however
// short (Agent Zero only holds tails of three characters or more, so a
// value whose first two characters end a chunk leaks whole). At the end of
// a stream, a held partial value of MinMasked bytes or more becomes "***"
// as in Agent Zero; a shorter one is returned in clear (see [Stream.Flush]).
//
// # What is not masked
//
// Masking finds the bytes of a value, in the forms listed at [Set.Mask]
// (as is, JSON-escaped, Go-quoted, with CRLF line ends). It does not find:
//
//   - the value encoded otherwise: base64 (an HTTP Basic header, a
//     Kubernetes secret), hex, URL-encoding (%2B for +), shell quoting
//     that adds characters (a quote escaped inside a single-quoted
//     string), other escapes of quotes or backslashes;
//   - the value with characters inserted or changed: colour codes
//     (grep --color inside a token), line wrapping done by a program,
//     another case (tr a-z A-Z), reversed, one character per line;
//   - part of a value in the middle of text (cut -c1-20 of a key): only a
//     whole value is masked, and a partial one only at the very end of a
//     stream;
//   - values shorter than MinMasked bytes;
//   - anything derived from a value: a hash, a signature, a token minted
//     with it.
//
// Masking protects against accidental display, not against an agent that
// sets out to exfiltrate a value it can use: a command can always encode
// what it prints, or send it over the network. Keep that in mind when
// deciding which secrets a workspace's agent gets.
package secrets
