// Package document turns files into text and text into chunks.
//
// It serves the knowledge importer, which imports folders of files into the
// agent's memory, and the document_query tool. Both read files from a
// workspace that someone else wrote, so every entry point treats its input as
// hostile: sizes are checked before reading, extracted text is capped, PDF
// parsing is bounded and never panics, and [Chunk] runs in linear time.
//
// The flow is
//
//	text, err := document.ReadFile(path, document.Options{})
//	chunks := document.Chunk(text, 512, 64, llm.CountTokens)
//
// [KindOf] tells from a name (and, when the name is not enough, the first
// bytes) whether a file can be read at all, so an importer can skip images and
// archives without reading them.
package document
