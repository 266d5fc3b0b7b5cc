//go:build race

package shed

// raceOn: the race detector slows every map access and atomic tenfold.
const raceOn = true
