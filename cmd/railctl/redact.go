package main

import (
	"bytes"
	"io"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Nothing railctl writes carries a password: the flag default does not show
// $DATABASE_URL, and every byte written to stdout and stderr (usage,
// errors, config: lines, the handlers' log lines) passes through a
// redactor that replaces the session's secrets (the connection string's
// password, PGPASSWORD) with "xxxxx".

const redacted = "xxxxx"

// secretsOf returns the passwords in a connection string (URL or
// keyword/value form) and in the environment's PGPASSWORD.
func secretsOf(connString string, getenv func(string) string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 3 { // a one- or two-character "password" would redact ordinary text
			out = append(out, s)
			if e := url.QueryEscape(s); e != s {
				out = append(out, e)
			}
			if e := url.PathEscape(s); e != s {
				out = append(out, e)
			}
		}
	}
	if connString != "" {
		if u, err := url.Parse(connString); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
		if cfg, err := pgconn.ParseConfig(connString); err == nil {
			add(cfg.Password)
		}
		if i := strings.Index(connString, "password="); i >= 0 {
			v := connString[i+len("password="):]
			if j := strings.IndexAny(v, " &"); j >= 0 {
				v = v[:j]
			}
			add(strings.Trim(v, "'"))
		}
	}
	if getenv != nil {
		add(getenv("PGPASSWORD"))
	}
	return out
}

// redactor writes to w with every secret replaced.
type redactor struct {
	w       io.Writer
	secrets func() []string
}

func (r redactor) Write(p []byte) (int, error) {
	q := p
	for _, s := range r.secrets() {
		if bytes.Contains(q, []byte(s)) {
			q = bytes.ReplaceAll(q, []byte(s), []byte(redacted))
		}
	}
	if _, err := r.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}
