//go:build race

package splitter

// raceEnabled is set under the race detector, which makes tests slower.
const raceEnabled = true
