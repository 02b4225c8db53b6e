package brief_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

const (
	firmID    = "6f1c2b7e-3d4a-4c55-9a0e-1b2c3d4e5f60"
	matterID  = "0b9e8d7c-6a5b-4c3d-8e2f-112233445566"
	complaint = "a1111111-1111-4111-8111-111111111111"
	answer    = "b2222222-2222-4222-8222-222222222222"
	exhibitA  = "c3333333-3333-4333-8333-333333333333"
	scanned   = "d4444444-4444-4444-8444-444444444444"
)

var sampleIDs = map[string]string{
	samples.ComplaintName: complaint,
	samples.AnswerName:    answer,
	samples.ExhibitAName:  exhibitA,
	samples.ScannedName:   scanned,
}

// sampleInput extracts the sample PDFs through pdftext, as the rail does.
func sampleInput(t testing.TB) brief.Input {
	t.Helper()
	in := brief.Input{FirmID: firmID, MatterID: matterID, Title: "Harlow Logistics Ltd v. Penmark Freight Inc."}
	for _, f := range samples.PDFs() {
		doc, err := pdftext.Extract(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		sum := sha256.Sum256(f.Data)
		in.Documents = append(in.Documents, brief.Document{
			ID: sampleIDs[f.Name], Name: f.Name, SHA256: hex.EncodeToString(sum[:]),
			Pages: doc.Pages, Note: doc.Note,
		})
	}
	return in
}
