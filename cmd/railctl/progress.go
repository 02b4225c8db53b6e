package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// progressHandler is a slog.Handler that prints one readable line per
// record: time, component, message and the attributes a person watching the
// rail cares about. Ids are shortened to their first 8 characters.
type progressHandler struct {
	mu        *sync.Mutex
	w         io.Writer
	component string
	attrs     []slog.Attr
	level     slog.Level
}

func newProgress(w io.Writer, level slog.Level) *progressHandler {
	return &progressHandler{mu: &sync.Mutex{}, w: w, level: level}
}

// logger returns a logger for one component.
func (h *progressHandler) logger(component string) *slog.Logger {
	c := *h
	c.component = component
	return slog.New(&c)
}

// loggerAt returns a logger for one component that prints only records at
// level or above.
func (h *progressHandler) loggerAt(component string, level slog.Level) *slog.Logger {
	c := *h
	c.component, c.level = component, max(level, h.level)
	return slog.New(&c)
}

// linef prints a line for a component directly.
func (h *progressHandler) linef(component, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.w, "%s %-8s %s\n", time.Now().Format("15:04:05.000"), component, fmt.Sprintf(format, args...))
}

func (h *progressHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *progressHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *progressHandler) WithGroup(string) slog.Handler { return h }

// hidden attributes: known from context or too noisy for a terminal.
var hiddenAttrs = map[string]bool{"firm_id": true, "message_id": true, "event_ids": true, "request_id": true}

func (h *progressHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		if hiddenAttrs[a.Key] {
			return true
		}
		v := a.Value.Resolve().Any()
		s := fmt.Sprint(v)
		if id, ok := v.(uuid.UUID); ok {
			s = id.String()[:8]
		} else if len(s) == 36 && strings.Count(s, "-") == 4 {
			s = s[:8]
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, s)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	prefix := ""
	if r.Level >= slog.LevelWarn {
		prefix = strings.ToUpper(r.Level.String()) + " "
	}
	h.linef(h.component, "%s%s", prefix, b.String())
	return nil
}
