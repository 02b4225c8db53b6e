//go:build race

package doctext

const raceEnabled = true
