package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// A v1 frame still in the ledger renders (its chronology and documents),
// and says that the next build writes v2.
func TestPrintBriefV1Frame(t *testing.T) {
	body, err := os.ReadFile("../../pkg/brief/testdata/frame_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printBrief(&out, postgres.JobRow{Current: true, RequestedGeneration: 3, BuiltGeneration: 3},
		rail.StoredFrame{Token: 1, Target: 3, Builder: "extractive/v1", Body: body})
	for _, want := range []string{
		"BRIEF  Harlow Logistics Ltd v. Penmark Freight Inc.",
		"schema brief/v1 (read as brief/v2; the next build writes brief/v2)",
		"2025-01-14  On January 14, 2025",
		"[complaint.pdf p.2]",
		"1. complaint.pdf — other, 2 page(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "is not a Brief") {
		t.Errorf("v1 frame not read:\n%s", out.String())
	}
}
