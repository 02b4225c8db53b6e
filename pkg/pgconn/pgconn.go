// Package pgconn opens the rail's Postgres pool from the environment, either
// a plain DATABASE_URL or RDS Proxy with IAM authentication.
//
// The pool is built for a Lambda function behind RDS Proxy: a few connections
// (DB_MAX_CONNS, default 2), the exec query mode (no named prepared
// statements; DB_QUERY_EXEC_MODE=simple_protocol is the fallback) and nothing
// that pins a proxied session: no SET, no startup options, no LISTEN, no
// session advisory locks, no temporary tables. Session settings such as
// statement_timeout belong on the role (ALTER ROLE ... SET), because the
// proxy rejects the options startup parameter.
//
// With DB_IAM_AUTH=true every new connection gets a fresh IAM token
// (feature/rds/auth.BuildAuthToken in BeforeConnect; a token lasts 15
// minutes, an open connection outlives it) over TLS that verifies the
// proxy's certificate against the host name (DB_SSLMODE, default
// verify-full; require encrypts without verifying).
package pgconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/rds/auth"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Environment variables read.
const (
	EnvDatabaseURL   = "DATABASE_URL"
	EnvHost          = "DB_HOST"
	EnvPort          = "DB_PORT"
	EnvName          = "DB_NAME"
	EnvUser          = "DB_USER"
	EnvIAMAuth       = "DB_IAM_AUTH"
	EnvPassword      = "DB_PASSWORD" // only without IAM auth; prefer DATABASE_URL
	EnvSSLMode       = "DB_SSLMODE"
	EnvMaxConns      = "DB_MAX_CONNS"
	EnvQueryExecMode = "DB_QUERY_EXEC_MODE"
)

// DefaultMaxConns is the pool size per function instance. Lambda runs one
// invocation per instance at a time; two leaves room for a heartbeat
// alongside the build's statements.
const DefaultMaxConns = 2

// Options adjust ConfigFromEnv.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// AWS is the SDK configuration the IAM token is signed with (region and
	// credentials); nil loads the default configuration when IAM auth is on.
	AWS *aws.Config
}

// Open opens the rail's pool: the one constructor the functions, the
// local rail and railctl share (via pkg/app). It does not connect: the
// first query does (so a cold start fails fast only on configuration
// errors, and the handler's error names the connection problem).
func Open(ctx context.Context, o Options) (*pgxpool.Pool, error) {
	cfg, err := ConfigFromEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgconn: open pool: %w", err)
	}
	return pool, nil
}

// ConfigFromEnv builds the pool configuration from the environment, with a
// clear error naming the variables when they are missing or invalid.
func ConfigFromEnv(ctx context.Context, o Options) (*pgxpool.Config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }

	var errs []error
	maxConns := DefaultMaxConns
	if v := env(EnvMaxConns); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 20 {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer from 1 to 20", EnvMaxConns, v))
		}
		maxConns = n
	}
	mode := pgx.QueryExecModeExec
	switch v := env(EnvQueryExecMode); v {
	case "", "exec":
	case "simple_protocol":
		mode = pgx.QueryExecModeSimpleProtocol
	default:
		errs = append(errs, fmt.Errorf("%s=%q: want exec or simple_protocol (named prepared statements pin RDS Proxy sessions)", EnvQueryExecMode, v))
	}
	iam := false
	if v := env(EnvIAMAuth); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", EnvIAMAuth, v))
		}
		iam = b
	}

	var connString string
	if u := env(EnvDatabaseURL); u != "" && !iam {
		connString = u
	} else {
		host, port, name, user := env(EnvHost), env(EnvPort), env(EnvName), env(EnvUser)
		var missing []string
		for k, v := range map[string]string{EnvHost: host, EnvName: name, EnvUser: user} {
			if v == "" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			errs = append(errs, fmt.Errorf("no database configured: set %s, or %s (with %s, %s and %s=true for RDS Proxy IAM auth); missing %s",
				EnvDatabaseURL, strings.Join([]string{EnvHost, EnvName, EnvUser}, ", "), EnvPort, EnvIAMAuth, EnvIAMAuth, strings.Join(missing, ", ")))
		}
		if port == "" {
			port = "5432"
		} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s=%q: not a port number", EnvPort, port))
		}
		sslmode := env(EnvSSLMode)
		if sslmode == "" {
			sslmode = "verify-full"
			if !iam {
				sslmode = "prefer"
			}
		}
		if iam && sslmode != "require" && sslmode != "verify-ca" && sslmode != "verify-full" {
			errs = append(errs, fmt.Errorf("%s=%q: IAM authentication needs TLS (require, verify-ca or verify-full)", EnvSSLMode, sslmode))
		}
		u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(host, port), Path: "/" + name}
		if pw := getenv(EnvPassword); pw != "" && !iam {
			u.User = url.UserPassword(user, pw)
		} else {
			u.User = url.User(user)
		}
		u.RawQuery = url.Values{"sslmode": {sslmode}}.Encode()
		connString = u.String()
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("pgconn: %w", errors.Join(errs...))
	}

	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("pgconn: parse connection settings: %w", err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["options"]; ok {
		return nil, errors.New("pgconn: the connection string sets options: RDS Proxy rejects it; set statement_timeout and friends on the role (ALTER ROLE ... SET)")
	}
	cfg.MaxConns = int32(maxConns)
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.MaxConnLifetime = 30 * time.Minute
	cfg.ConnConfig.DefaultQueryExecMode = mode
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}

	if iam {
		if cfg.ConnConfig.TLSConfig == nil {
			return nil, errors.New("pgconn: IAM authentication needs TLS")
		}
		awsCfg := o.AWS
		if awsCfg == nil {
			c, err := config.LoadDefaultConfig(ctx)
			if err != nil {
				return nil, fmt.Errorf("pgconn: load AWS configuration for IAM auth: %w", err)
			}
			awsCfg = &c
		}
		if awsCfg.Region == "" {
			return nil, errors.New("pgconn: IAM auth needs an AWS region (AWS_REGION)")
		}
		if awsCfg.Credentials == nil {
			return nil, errors.New("pgconn: IAM auth needs AWS credentials")
		}
		region, creds := awsCfg.Region, awsCfg.Credentials
		cfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
			endpoint := net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
			token, err := auth.BuildAuthToken(ctx, endpoint, region, cc.User, creds)
			if err != nil {
				return fmt.Errorf("pgconn: build IAM auth token for %s@%s: %w", cc.User, endpoint, err)
			}
			cc.Password = token
			return nil
		}
	}
	return cfg, nil
}
