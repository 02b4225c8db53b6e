package brief_test

import (
	"testing"

	"github.com/pramaan/brief-rail/internal/testenv/briefsample"
	"github.com/pramaan/brief-rail/pkg/brief"
)

const (
	firmID    = briefsample.FirmID
	matterID  = briefsample.MatterID
	complaint = briefsample.Complaint
	answer    = briefsample.Answer
	exhibitA  = briefsample.ExhibitA
	scanned   = briefsample.Scanned
)

// sampleInput extracts the sample PDFs through pdftext, as the rail does.
func sampleInput(t testing.TB) brief.Input { return briefsample.Input(t) }
