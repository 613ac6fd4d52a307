//go:build race

package vision

// raceEnabled: the race detector slows the pixel loops tenfold, so the
// tests of large pictures use smaller ones that scale to the same size.
const raceEnabled = true
