package document

import "errors"

// Errors returned (wrapped) by [Text], [Extract] and [ReadFile]. Match them
// with errors.Is; the wrapping message names the file and says what to do.
var (
	// ErrUnsupported means the file is binary or of a kind this package
	// cannot read (images, archives, office files, ...).
	ErrUnsupported = errors.New("unsupported file type")
	// ErrTooLarge means the file or its extracted text is over a limit in
	// [Options], or a PDF expands to more data than is safe to process.
	ErrTooLarge = errors.New("too large")
	// ErrEncrypted means the PDF is encrypted (even with an empty user
	// password): its streams cannot be checked before they are decoded.
	ErrEncrypted = errors.New("encrypted PDF")
	// ErrNoText means the PDF has pages but no text layer, as scanned
	// documents do.
	ErrNoText = errors.New("no text layer")
	// ErrMalformed means the PDF is broken or is built in a way the
	// parser refuses (for example a cross-reference loop).
	ErrMalformed = errors.New("malformed PDF")
)
