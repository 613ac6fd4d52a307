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
//	<dir>/roots/<sha256 of root>    JSON naming the newest manifest of that root (the stat cache)
//	<dir>/tmp/                      files being written (then renamed into place)
//	<dir>/lock                      flock: shared by Take/Changes/Restore, exclusive for Prune
//
// An object is written once, to a temporary file and renamed into place, so
// writing is idempotent and safe when several processes snapshot at once. A
// manifest is a compact binary encoding (front-coded paths, varints, raw
// hashes; about 65 bytes an entry, 42 gzip'd) rather than JSON or gob: it is
// decoded before every snapshot, which for 100,000 files takes about 15 ms
// (plus as much again to gunzip). Its id is the first 32 hex digits of the
// SHA-256 of that encoding, so two snapshots of an unchanged tree share one
// manifest. Entries are in walk order: a folder's contents follow it.
//
// Copies instead of a shadow Git repository (go-git, or git itself): a
// snapshot needs no commit graph, no trees per folder and no zlib; restoring
// needs no checkout machinery; and the stat cache (size, mtime in ns, inode,
// ctime of every file, kept in the newest manifest of each root) means a
// snapshot of an unchanged 100,000-file workspace costs one walk of the
// folders and no file reads. Files whose mtime lies within 2 s of the scan
// that recorded them are "racy" and are read again next time, as Git does.
//
// The walk lists folders ahead of itself on runtime.GOMAXPROCS goroutines
// (the fstatat of every entry is most of its cost) while one goroutine keeps
// the order, the ignore rules and the cache; new or changed files are read
// and copied by as many workers. Measured on 2 cores (see docs/performance.md,
// BenchmarkTake100kFiles): an unchanged 100,000-file tree in about 0.2–0.25 s,
// one changed file 0.4 s (most of it writing the new 4 MiB manifest), the
// first snapshot 4–5 s (creating 100,000 object files); a 2 GB ignored build
// folder costs nothing (BenchmarkTake2GBIgnored).
//
// The price of whole manifests instead of Git's shared trees: each snapshot
// that differs from the last stores a new manifest of the whole tree (about
// 4 MiB for 100,000 files). Prune removes the ones no longer needed.
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
// Concurrency: a Store is safe for concurrent use; Takes and Restores of one
// root are serialised inside a process. Between processes the flock on
// <dir>/lock keeps Prune apart from the rest (on platforms without flock,
// only inside one process); two processes snapshotting one root at once
// are safe, as every file in the store is written once and renamed into
// place, and the root's index is the last one written.
//
// Durability: objects are not fsync'd. A copy damaged by a crash is caught by
// Restore, which checks every object it needs against its name before it
// touches the workspace.
package checkpoint
