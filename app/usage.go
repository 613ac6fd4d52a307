package app

import (
	"github.com/zeroagent/zero/loop"
)

// price is what the configuration says role's model costs (models.<role>.price),
// for a client of model: nil (unknown) when no price is configured, or when
// the client is of another model than the configured one (a profile's, or
// the editor's choice), which that price is not the price of.
func (a *App) price(role, model string) *loop.Price {
	if a.Config == nil {
		return nil
	}
	p, ok := a.Config.Price(role)
	configured := map[string]string{
		"chat": a.Config.Models.Chat.Model, "utility": a.Config.Models.Utility.Model, "embedding": a.Config.Models.Embedding.Model,
	}[role]
	if !ok || model == "" || model != configured {
		return nil
	}
	return &loop.Price{Input: p.Input, Output: p.Output, Cached: p.Cached}
}

// modelName is the model a client of the loop calls, "" when it is none of
// ours.
func modelName(m loop.Model) string {
	switch m := m.(type) {
	case reachModel:
		return m.Client.Model()
	case countedModel:
		return m.Client.Model()
	case observed:
		return modelName(m.Model)
	}
	return ""
}
