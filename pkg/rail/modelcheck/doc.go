// Package modelcheck is an exhaustive explicit-state model check of the
// Brief rail's job ledger.
package modelcheck
