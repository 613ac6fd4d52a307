//go:build race

package mcp

func init() { raceEnabled = true }
