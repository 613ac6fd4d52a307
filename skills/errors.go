package skills

import "errors"

// Reasons a skill is skipped (wrapped in a [Warning]'s Err), and errors of [Catalog.Load].
var (
	ErrNoFrontMatter   = errors.New("SKILL.md has no YAML front matter (a block between --- lines at the top)")
	ErrFrontMatter     = errors.New("malformed front matter")
	ErrNoName          = errors.New("front matter has no name")
	ErrName            = errors.New("invalid name (at most 64 lowercase letters, digits, '-', '_' or '.', starting with a letter or digit)")
	ErrNoDescription   = errors.New("front matter has no description")
	ErrDescription     = errors.New("description is longer than 1024 characters")
	ErrTooLarge        = errors.New("SKILL.md is larger than 256 KiB")
	ErrNotRegular      = errors.New("SKILL.md is not a regular file")
	ErrEscapes         = errors.New("symbolic link leads out of the skill's folder")
	ErrLinkNotFollowed = errors.New("symbolic link not followed")
	ErrDuplicate       = errors.New("name already taken by another skill of the same layer")
	ErrTooMany         = errors.New("too many entries to search; the rest is skipped")
	ErrNotFound        = errors.New("skill not found")
)
