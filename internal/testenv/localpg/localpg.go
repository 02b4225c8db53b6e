// Package localpg is the tests' name for pkg/localdb, the PostgreSQL server
// the product itself starts for `make run` (docs/ARCHITECTURE.md, section
// 2): the test harnesses (internal/testenv/railtest, the simulation, the
// benchmarks) start their throwaway servers with the very same starter.
// Everything here is pkg/localdb's; nothing is restated.
package localpg

import (
	"context"

	"github.com/pramaan/brief-rail/pkg/localdb"
)

// The server and its options (pkg/localdb).
type (
	Options = localdb.Options
	Server  = localdb.Server
)

// Constants of pkg/localdb.
const (
	Superuser             = localdb.Superuser
	DefaultMaxConnections = localdb.DefaultMaxConnections
	BinDirEnv             = localdb.BinDirEnv
)

// ErrNoBinaries: no PostgreSQL server binaries were found.
var ErrNoBinaries = localdb.ErrNoBinaries

// Start starts a server (localdb.Start).
func Start(ctx context.Context, opt Options) (*Server, error) { return localdb.Start(ctx, opt) }

// FindBinaries finds initdb and postgres (localdb.FindBinaries).
func FindBinaries() (string, error) { return localdb.FindBinaries() }
