// Package checkpoint takes snapshots of a workspace folder's files and puts
// them back, so that Zero can undo what an agent run changed — including what
// the model's shell commands changed, which no edit tool ever saw.
//
// # Design
//
// A snapshot is a list of content-addressed copies, kept outside the
// workspace in a store folder:
//
//	<dir>/objects/<2 hex>/<62 hex>  the bytes of one file, named by their SHA-256
//	<dir>/manifests/<id>            one snapshot: the sorted entries, gzip'd
//	<dir>/roots/<sha256 of root>    the newest manifest of that root (the stat cache)
//	<dir>/tmp/                      files being written (then renamed into place)
//	<dir>/lock                      shared by Take/Changes/Restore, exclusive for Prune
//
// An object is written once, to a temporary file and renamed into place, so
// writing is idempotent and safe when several processes snapshot at once. A
// manifest's id is the first 32 hex digits of the SHA-256 of its encoding, so
// two snapshots of an unchanged tree share one manifest.
//
// Copies instead of a shadow Git repository (go-git, or git itself): a
// snapshot needs no commit graph, no trees per folder and no zlib; restoring
// needs no checkout machinery; and the stat cache (size, mtime in ns, inode,
// ctime of every file, kept in the newest manifest of each root) means a
// snapshot of an unchanged 100,000-file workspace costs one walk of the
// folders and no file reads. Files whose mtime lies within 2 s of the scan
// that recorded them are "racy" and are read again next time, as Git does.
//
// # What is covered
//
// Regular files, folders and symbolic links (recorded as links, never
// followed). Git's ignore rules are honoured: the root's .gitignore, nested
// ones (applying under their folder), .git/info/exclude, negation and
// folder-only patterns (matched with go-git's gitignore package). An ignored
// folder is not entered at all. A ".git" file or folder at any depth is never
// entered, copied, deleted or restored. FIFOs, sockets and devices are never
// opened. Files larger than Options.MaxFileBytes and files beyond the
// snapshot limits are recorded as skipped: Restore neither deletes nor
// rewrites them, and names them in Result.Failed if they changed since.
//
// Every path in the workspace is opened through an [os.Root], folder by
// folder, so neither a snapshot nor a restore can be led out of the root by
// a symbolic link; Restore removes a link (or anything else of the wrong
// kind) that stands where a folder or file must be put back, and writes files
// as a temporary file in the same folder renamed into place.
//
// Durability: objects are not fsync'd. A copy damaged by a crash is caught by
// Restore, which checks every object it needs against its name before it
// touches the workspace.
package checkpoint
