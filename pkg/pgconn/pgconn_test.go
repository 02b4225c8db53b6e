package pgconn_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/pgconn"
)

func TestMain(m *testing.M) { railtest.Main(m) }

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPlainDatabaseURL(t *testing.T) {
	db := railtest.NewDB(t)
	ctx := context.Background()
	cfg, err := pgconn.ConfigFromEnv(ctx, pgconn.Options{Getenv: envOf(map[string]string{"DATABASE_URL": db.URL, "DB_MAX_CONNS": "3"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 3 || cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeExec || cfg.BeforeConnect != nil {
		t.Fatalf("max %d mode %v beforeConnect set %v: want 3, exec, none", cfg.MaxConns, cfg.ConnConfig.DefaultQueryExecMode, cfg.BeforeConnect != nil)
	}
	t.Setenv("DATABASE_URL", db.URL)
	t.Setenv("DB_MAX_CONNS", "")
	pool, err := pgconn.Open(ctx, pgconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ops.matter_frame_jobs WHERE firm_id = $1`, "00000000-0000-0000-0000-000000000000").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if pool.Config().MaxConns != pgconn.DefaultMaxConns {
		t.Fatalf("max conns %d, want the default %d", pool.Config().MaxConns, pgconn.DefaultMaxConns)
	}
}

func TestIAMBeforeConnectSignsATokenForTheEndpointAndUser(t *testing.T) {
	ctx := context.Background()
	awsCfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	cfg, err := pgconn.ConfigFromEnv(ctx, pgconn.Options{AWS: &awsCfg, Getenv: envOf(map[string]string{
		"DB_HOST": "brief-rail.proxy-abc.eu-west-1.rds.amazonaws.com", "DB_PORT": "5432",
		"DB_NAME": "brief", "DB_USER": "brief_trigger", "DB_IAM_AUTH": "true",
		"DATABASE_URL": "postgres://ignored@elsewhere/x", // IAM settings win
	})})
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.ConnConfig
	if cc.TLSConfig == nil || cc.TLSConfig.InsecureSkipVerify || cc.TLSConfig.ServerName != "brief-rail.proxy-abc.eu-west-1.rds.amazonaws.com" {
		t.Fatalf("TLS %+v: want verification against the proxy host name", cc.TLSConfig)
	}
	if len(cc.Fallbacks) != 0 {
		t.Fatalf("fallbacks %d: IAM auth must never fall back to plain text", len(cc.Fallbacks))
	}
	if cfg.BeforeConnect == nil {
		t.Fatal("no BeforeConnect: the token would never be refreshed")
	}
	conn := cc.Copy()
	if err := cfg.BeforeConnect(ctx, conn); err != nil {
		t.Fatal(err)
	}
	tok := conn.Password
	prefix := "brief-rail.proxy-abc.eu-west-1.rds.amazonaws.com:5432?"
	if !strings.HasPrefix(tok, prefix) {
		t.Fatalf("token %q does not start with %q", tok, prefix)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(tok, prefix))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"Action": "connect", "DBUser": "brief_trigger", "X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Expires": "900"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	if c := q.Get("X-Amz-Credential"); !strings.HasPrefix(c, "AKIDEXAMPLE/") || !strings.HasSuffix(c, "/eu-west-1/rds-db/aws4_request") {
		t.Errorf("credential scope %q: want AKIDEXAMPLE/.../eu-west-1/rds-db/aws4_request", c)
	}
	if q.Get("X-Amz-Signature") == "" {
		t.Error("token is not signed")
	}
	// The pool's own config is not mutated: each new connection signs afresh.
	if cc.Password != "" {
		t.Fatal("BeforeConnect wrote the token into the shared config")
	}
}

func TestMissingOrInvalidConfigNamesTheVariables(t *testing.T) {
	ctx := context.Background()
	awsCfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("A", "B", "")}
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string
	}{
		"nothing":          {map[string]string{}, []string{"DATABASE_URL", "DB_HOST", "DB_NAME", "DB_USER"}},
		"iam without host": {map[string]string{"DB_IAM_AUTH": "true", "DB_NAME": "b", "DB_USER": "u"}, []string{"missing DB_HOST"}},
		"bad port":         {map[string]string{"DB_HOST": "h", "DB_NAME": "b", "DB_USER": "u", "DB_PORT": "x"}, []string{"DB_PORT"}},
		"bad iam flag":     {map[string]string{"DATABASE_URL": "postgres://h/b", "DB_IAM_AUTH": "yes please"}, []string{"DB_IAM_AUTH"}},
		"bad max conns":    {map[string]string{"DATABASE_URL": "postgres://h/b", "DB_MAX_CONNS": "500"}, []string{"DB_MAX_CONNS"}},
		"pinning mode":     {map[string]string{"DATABASE_URL": "postgres://h/b", "DB_QUERY_EXEC_MODE": "cache_statement"}, []string{"DB_QUERY_EXEC_MODE"}},
		"iam without tls":  {map[string]string{"DB_HOST": "h", "DB_NAME": "b", "DB_USER": "u", "DB_IAM_AUTH": "1", "DB_SSLMODE": "disable"}, []string{"DB_SSLMODE"}},
		"options param":    {map[string]string{"DATABASE_URL": "postgres://h/b?options=-c%20statement_timeout%3D5s"}, []string{"options", "ALTER ROLE"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := pgconn.ConfigFromEnv(ctx, pgconn.Options{Getenv: envOf(tc.env), AWS: &awsCfg})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
