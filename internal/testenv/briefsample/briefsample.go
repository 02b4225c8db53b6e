// Package briefsample is the sample matter as a Brief builder reads it: the
// sample PDFs (pkg/brief/samples) extracted through pdftext, as the rail
// stores them, under fixed ids. The Brief's tests and the Bedrock
// builder's tests (whose recorded replies cite these ids) share it.
package briefsample

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The sample matter's ids.
const (
	FirmID    = "6f1c2b7e-3d4a-4c55-9a0e-1b2c3d4e5f60"
	MatterID  = "0b9e8d7c-6a5b-4c3d-8e2f-112233445566"
	Complaint = "a1111111-1111-4111-8111-111111111111"
	Answer    = "b2222222-2222-4222-8222-222222222222"
	ExhibitA  = "c3333333-3333-4333-8333-333333333333"
	Scanned   = "d4444444-4444-4444-8444-444444444444"
)

// Title is the sample matter's title.
const Title = "Harlow Logistics Ltd v. Penmark Freight Inc."

// IDs maps each sample file's name to its document id.
var IDs = map[string]string{
	samples.ComplaintName: Complaint,
	samples.AnswerName:    Answer,
	samples.ExhibitAName:  ExhibitA,
	samples.ScannedName:   Scanned,
}

// Input extracts the sample PDFs through pdftext, as the rail does.
func Input(t testing.TB) brief.Input {
	t.Helper()
	in := brief.Input{FirmID: FirmID, MatterID: MatterID, Title: Title}
	for _, f := range samples.PDFs() {
		doc, err := pdftext.Extract(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		sum := sha256.Sum256(f.Data)
		in.Documents = append(in.Documents, brief.Document{
			ID: IDs[f.Name], Name: f.Name, SHA256: hex.EncodeToString(sum[:]),
			Pages: doc.Pages, Note: doc.Note,
		})
	}
	return in
}

// RailInputs is in as the rail hands it to a FrameBuilder (in memory,
// rail.NewInputs). Its ids must be uuids.
func RailInputs(in brief.Input) rail.Inputs {
	var docs []rail.Document
	for _, d := range in.Documents {
		docs = append(docs, rail.Document{ID: uuid.MustParse(d.ID), Name: d.Name, SHA256: d.SHA256, Pages: d.Pages, Note: d.Note})
	}
	ref := rail.MatterRef{FirmID: uuid.MustParse(in.FirmID), MatterID: uuid.MustParse(in.MatterID)}
	return rail.NewInputs(ref, in.Title, docs)
}
