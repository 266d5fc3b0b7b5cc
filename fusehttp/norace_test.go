//go:build !race

package fusehttp_test

const raceEnabled = false
