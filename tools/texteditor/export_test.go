package texteditor

// SetAfterResolve sets a function the text editor calls between the check
// of a path and its use, with the path's real form: the tests change the
// tree there, as a process racing in the workspace could.
func (te *Tool) SetAfterResolve(f func(real string)) { te.afterResolve = f }
