package promise

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The functions' database roles (migration 008), one per function.
const (
	RoleRelay   = "brief_relay"
	RoleTrigger = "brief_trigger"
	RoleBuilder = "brief_builder"
	RoleSweeper = "brief_sweeper"
)

// Roles lists the functions' roles.
var Roles = []string{RoleRelay, RoleTrigger, RoleBuilder, RoleSweeper}

// Env is one lane: a migrated database, the harness's pool (the host
// application and the oracle, as the schema owner) and one pool per
// function, each logged in as the function's own role so the role's
// session settings (statement_timeout, idle_in_transaction_session_timeout,
// lock_timeout) apply as they do when deployed. Runs on one Env are
// sequential; each run empties the tables first.
type Env struct {
	DBName string
	Admin  *pgxpool.Pool            // the host application and the oracle
	Pools  map[string]*pgxpool.Pool // by role
	// Scale is the factor the role settings were multiplied by
	// (ScaleRoleSettings); the relay's publish budget and the bus's
	// latency are scaled by it too.
	Scale float64
	// RoleSettings are the scaled settings in force, by role.
	RoleSettings map[string]map[string]time.Duration
}

// DefaultScale is the factor every timing of the deployed configuration
// that runs in real time (the roles' database timeouts, the relay's publish
// budget, the slow bus's latency) is multiplied by: 10 s becomes 1 s. The
// ratios, which decide whether a slow bus stops the relay, are kept.
const DefaultScale = 0.1

// DeployedRoleSettings reads the session settings migration 008 gave each
// function's role (pg_db_role_setting, in whichever database the migration
// ran: the template the test databases are cloned from, whose per-database
// role settings a clone does not inherit). The migration is the source:
// nothing here restates its values.
//
// It is read once per process, before any lane has scaled the settings in
// its own database (NewEnv holds envMu across the read and the scaling).
func DeployedRoleSettings(ctx context.Context, admin *pgxpool.Pool) (map[string]map[string]time.Duration, error) {
	if deployedCache != nil {
		return deployedCache, nil
	}
	out, err := readRoleSettings(ctx, admin)
	if err == nil {
		deployedCache = out
	}
	return out, err
}

var (
	envMu         sync.Mutex
	deployedCache map[string]map[string]time.Duration
)

func readRoleSettings(ctx context.Context, admin *pgxpool.Pool) (map[string]map[string]time.Duration, error) {
	rows, err := admin.Query(ctx, `SELECT r.rolname, s.setconfig FROM pg_db_role_setting s
        JOIN pg_roles r ON r.oid = s.setrole WHERE r.rolname = ANY($1::text[])`, Roles)
	if err != nil {
		return nil, fmt.Errorf("read role settings: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]time.Duration{}
	for rows.Next() {
		var role string
		var cfg []string
		if err := rows.Scan(&role, &cfg); err != nil {
			rows.Close()
			return nil, err
		}
		if out[role] == nil {
			out[role] = map[string]time.Duration{}
		}
		for _, kv := range cfg {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasSuffix(k, "timeout") {
				continue
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("role %s: %s=%q: %w", role, k, v, err)
			}
			if old, seen := out[role][k]; seen && old != d {
				return nil, fmt.Errorf("role %s: %s is %s in one database and %s in another", role, k, old, d)
			}
			out[role][k] = d
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, r := range Roles {
		for _, k := range []string{"statement_timeout", "idle_in_transaction_session_timeout", "lock_timeout"} {
			if _, ok := out[r][k]; !ok {
				return nil, fmt.Errorf("role %s has no %s (migration 008 not applied by a role that can create roles?)", r, k)
			}
		}
	}
	return out, nil
}

// ScaleRoleSettings writes the deployed settings, multiplied by scale, as
// each role's settings in database db (ALTER ROLE … IN DATABASE … SET), so
// a pool logged in as the role gets them at connect, as a function does.
func ScaleRoleSettings(ctx context.Context, admin *pgxpool.Pool, db string, deployed map[string]map[string]time.Duration, scale float64) (map[string]map[string]time.Duration, error) {
	out := map[string]map[string]time.Duration{}
	for role, set := range deployed {
		out[role] = map[string]time.Duration{}
		for k, d := range set {
			s := time.Duration(float64(d) * scale).Round(time.Millisecond)
			out[role][k] = s
			q := fmt.Sprintf("ALTER ROLE %s IN DATABASE %s SET %s = '%dms'", pgx.Identifier{role}.Sanitize(),
				pgx.Identifier{db}.Sanitize(), k, s.Milliseconds())
			if _, err := admin.Exec(ctx, q); err != nil {
				return nil, fmt.Errorf("scale %s's %s: %w", role, k, err)
			}
		}
	}
	return out, nil
}

// tables the run empties (every table of the record and the ledger but the
// backfill's control row and the relay lease, which are reset).
const resetSQL = `
DO $$
DECLARE t text;
BEGIN
    SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') INTO t
    FROM pg_tables WHERE schemaname IN ('app', 'ops') AND tablename NOT IN ('backfill_control', 'relay_lease');
    EXECUTE 'TRUNCATE ' || t || ' CASCADE';
    UPDATE ops.backfill_control SET paused = false, changed_at = clock_timestamp(), changed_by = '',
        allowance_at = clock_timestamp(), admitted = 0;
    UPDATE ops.relay_lease SET holder = NULL, lease_until = NULL, taken_at = NULL, takeovers = 0;
END $$`

// timeTravelSQL builds one statement per table moving every timestamptz
// column of the record and the ledger back by $1 seconds: to the rail the
// database clock has moved on by that much (the database clock itself is
// never replaced).
func timeTravelStatements(ctx context.Context, admin *pgxpool.Pool) ([]string, error) {
	rows, err := admin.Query(ctx, `SELECT table_schema, table_name, array_agg(column_name::text ORDER BY column_name)
        FROM information_schema.columns c
        WHERE table_schema IN ('app', 'ops') AND data_type = 'timestamp with time zone'
          AND EXISTS (SELECT FROM information_schema.tables t WHERE t.table_schema = c.table_schema
                      AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE')
          AND is_generated = 'NEVER'
        GROUP BY 1, 2 ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var schema, table string
		var cols []string
		if err := rows.Scan(&schema, &table, &cols); err != nil {
			rows.Close()
			return nil, err
		}
		set := make([]string, len(cols))
		where := make([]string, len(cols))
		for i, c := range cols {
			id := pgx.Identifier{c}.Sanitize()
			set[i] = fmt.Sprintf("%s = %s - make_interval(secs => $1)", id, id)
			where[i] = id + " IS NOT NULL"
		}
		out = append(out, fmt.Sprintf("UPDATE %s SET %s WHERE %s", pgx.Identifier{schema, table}.Sanitize(),
			strings.Join(set, ", "), strings.Join(where, " OR ")))
	}
	return out, rows.Err()
}
