package railtest

import "testing"

// NewEmptyDB creates a database with no schema at all (not cloned from the
// migrated template), dropped at cleanup: for tests of the migration path
// and of functions that must refuse an unmigrated database.
func NewEmptyDB(t testing.TB) *DB {
	t.Helper()
	return createDB(t, "e", "template0", 8)
}

// AdminURL is the admin connection's URL with the database name replaced
// by db (for tests that connect as another role, say).
func AdminURL(t testing.TB, db string) string {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("railtest: %v", err)
	}
	return withDB(adminURL, db)
}
