package railtest

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// NewEmptyDB creates a database with no schema at all (not cloned from the
// migrated template), dropped at cleanup: for tests of the migration path
// and of functions that must refuse an unmigrated database.
func NewEmptyDB(t testing.TB) *DB {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("railtest: %v", err)
	}
	name := fmt.Sprintf("e_%d_%d", os.Getpid(), seq.Add(1))
	if err := adminExec(context.Background(), "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("railtest: create database: %v", err)
	}
	db := &DB{Name: name, URL: withDB(adminURL, name)}
	db.Pool = Pool(t, db.URL, 8)
	t.Cleanup(func() {
		db.Pool.Close()
		_ = adminExec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return db
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
