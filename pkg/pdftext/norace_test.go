//go:build !race

package pdftext_test

const raceEnabled = false
