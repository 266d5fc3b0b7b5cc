//go:build race

package compare

// raceEnabled: the race detector makes a harness run some ten times dearer.
const raceEnabled = true
