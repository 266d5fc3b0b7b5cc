//go:build race

package loadtest

// raceEnabled: the race detector makes a run some ten times dearer.
const raceEnabled = true
