package server

// Choice is a profile or a model an editor may offer the user.
type Choice struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Backend, for a profile, is the sandbox backend it is written for
	// ("docker"); "" fits any.
	Backend string `json:"backend,omitempty"`
}

// Catalog tells the faces what the user can choose from (ACP session
// config options, slash commands, MCP tool descriptions). Implementations
// must be safe for concurrent use.
type Catalog interface {
	// Profiles lists the agent profiles, the default first.
	Profiles() []Choice
	// Models lists the chat models that can be chosen, the default first;
	// it may be just the configured one.
	Models() []Choice
}

// StaticCatalog is a Catalog of fixed lists.
type StaticCatalog struct {
	ProfileList []Choice
	ModelList   []Choice
}

// Profiles implements Catalog.
func (c StaticCatalog) Profiles() []Choice { return c.ProfileList }

// Models implements Catalog.
func (c StaticCatalog) Models() []Choice { return c.ModelList }
