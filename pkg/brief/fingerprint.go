package brief

import (
	"context"
	"strings"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Fingerprint returns the input fingerprint that a build of in by the
// builder identified by id records in Brief.InputFingerprint: the rail's
// one definition (rail.InputFingerprint), over the builder's identity, the
// firm and matter ids, the title and each document's id, content hash and
// name in order of id. It is the value the worker stores on the frame built
// from the same inputs (rail.Inputs.FingerprintFor) and compares to skip an
// unchanged build. It does not read page text: the content hash names the
// document, whose text was extracted from it once. It reads in with one
// pass of Each.
func Fingerprint(ctx context.Context, in Input, id rail.BuilderIdentity) (string, error) {
	f := newFingerprint(in, id)
	for d, err := range in.Each(ctx) {
		if err != nil {
			return "", err
		}
		addToFingerprint(f, d)
	}
	return f.Sum(), nil
}

// newFingerprint starts in's fingerprint; add the documents in the order
// Each yields them (order of lowercase id, the manifest's order). Ids are
// uuids (Input.Validate), lowercased here to the rail's text form.
func newFingerprint(in Input, id rail.BuilderIdentity) rail.InputFingerprint {
	return rail.NewInputFingerprint(id, strings.ToLower(in.FirmID), strings.ToLower(in.MatterID), in.Title)
}

func addToFingerprint(f rail.InputFingerprint, d Document) {
	f.Add(strings.ToLower(d.ID), d.SHA256, d.Name)
}
