package rail_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The input fingerprint's values are pinned: landed frames carry them, and
// the worker skips a build only when the next one is equal. A change here
// makes every matter rebuild (and call its model) once. The values were
// computed by the definition as it stood before it became
// rail.InputFingerprint (Inputs.Fingerprint and FingerprintFor).
func TestInputFingerprintPinned(t *testing.T) {
	ref := rail.MatterRef{FirmID: uuid.MustParse("6f1c2b7e-3d4a-4c55-9a0e-1b2c3d4e5f60"),
		MatterID: uuid.MustParse("0b9e8d7c-6a5b-4c3d-8e2f-112233445566")}
	in := rail.NewInputs(ref, `Harlow "Logistics" v. Penmark`, []rail.Document{
		{ID: uuid.MustParse("b2222222-2222-4222-8222-222222222222"), Name: "answer.pdf", SHA256: "bb", Pages: []string{"x"}},
		{ID: uuid.MustParse("a1111111-1111-4111-8111-111111111111"), Name: "complaint.pdf", SHA256: "aa", Pages: []string{"y"}},
	})
	for _, c := range []struct {
		id   rail.BuilderIdentity
		want string
	}{
		{rail.BuilderIdentity{Name: "digest/v1"}, "eda10f91db0c9f2af833129e92194ff2b8aa3302f724fd38f9f2b81d7147a55b"},
		{rail.BuilderIdentity{Name: "extractive/v2", Version: "brief/v2"}, "faf0863c0a6b82419c9f4c67a106c39735e08335be8084b806e4435f436afdaa"},
		{rail.BuilderIdentity{Name: "bedrock/v2:m", Version: "brief/v2", ModelID: "m", PromptHash: "p"}, "b437941a04b2ce90e1d08c1316bbf8bd7c699d3bb2626b5943fa952755499324"},
	} {
		if got := in.FingerprintFor(c.id); got != c.want {
			t.Errorf("%s: fingerprint %s, want %s (the value landed frames carry)", c.id, got, c.want)
		}
		// Written incrementally by hand, in id order: the same value.
		f := rail.NewInputFingerprint(c.id, ref.FirmID.String(), ref.MatterID.String(), in.Title)
		f.Add("a1111111-1111-4111-8111-111111111111", "aa", "complaint.pdf")
		f.Add("b2222222-2222-4222-8222-222222222222", "bb", "answer.pdf")
		if got := f.Sum(); got != c.want {
			t.Errorf("%s: incremental fingerprint %s, want %s", c.id, got, c.want)
		}
	}
	// Page text is not part of it (the content hash names the content).
	other := rail.NewInputs(ref, in.Title, []rail.Document{
		{ID: uuid.MustParse("a1111111-1111-4111-8111-111111111111"), Name: "complaint.pdf", SHA256: "aa", Pages: []string{"other text"}},
		{ID: uuid.MustParse("b2222222-2222-4222-8222-222222222222"), Name: "answer.pdf", SHA256: "bb"},
	})
	id := rail.BuilderIdentity{Name: "digest/v1"}
	if other.FingerprintFor(id) != in.FingerprintFor(id) {
		t.Error("page text changed the fingerprint")
	}
}
