// Package localdb starts and stops a PostgreSQL server built from the
// binaries installed on this machine (initdb and postgres), for tests and for
// the local runner.
//
// A server is either throwaway (Options.DataDir empty: a fresh cluster in a
// temporary directory that Stop removes, with fsync and friends turned off so
// tests run fast) or project-local (Options.DataDir set: the cluster is
// created on first use and reused, with its data kept between runs).
//
// The server listens on 127.0.0.1 only (no unix socket), trusts every
// loopback connection and has a superuser named "postgres"; URL builds a
// connection string for any database in it. The postmaster runs as a child
// of the calling process: on Linux it is told to shut down when the creating
// thread dies, so a crashed test binary does not leave it behind, but only
// Stop removes a throwaway data directory.
//
// PostgreSQL refuses to run as root. When the caller is root, initdb and
// postgres run as the "postgres" OS user (looked up with os/user) and the
// data directory is chowned to that user; every parent directory of the data
// directory must then be searchable by that user.
//
// Binaries are looked up in $LOCALPG_BINDIR, then on $PATH, then in the usual
// package locations (/usr/lib/postgresql/<version>/bin on Debian and Ubuntu,
// Homebrew's prefixes on macOS); see FindBinaries.
//
// For per-test isolation, migrate one template database once and give every
// test its own copy with CreateDatabase(ctx, name, template); DropDatabase
// removes it even when connections are still open.
package localdb
