//go:build race

package mcpface

func init() { raceEnabled = true }
