package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/pipeline"
)

// TestIngesterCloseWarns: what fails to close after a run (a last
// checkpoint a full disk kept from being made) is logged as a warning, in
// the reverse order of opening, and returned; every closer runs.
func TestIngesterCloseWarns(t *testing.T) {
	var buf bytes.Buffer
	var order []string
	closer := func(name string, err error) func() error {
		return func() error { order = append(order, name); return err }
	}
	manifest := errors.New("state: last checkpoint of /data/state.db: database or disk is full")
	store := errors.New("local: last checkpoint in /data/index.db: database or disk is full")
	in := &ingester{
		opts:    pipeline.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))},
		closers: []func() error{closer("manifest", manifest), closer("lock", nil), closer("store", store)},
	}
	err := in.Close()
	if !errors.Is(err, manifest) || !errors.Is(err, store) {
		t.Errorf("Close = %v; want both failures", err)
	}
	if got := strings.Join(order, ","); got != "store,lock,manifest" {
		t.Errorf("closed %s; want store,lock,manifest", got)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %q; want two warnings", buf.String())
	}
	for i, want := range []string{"/data/index.db", "/data/state.db"} {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q; want a warning naming %s", i, lines[i], want)
		}
	}
	if err := in.Close(); err != nil || len(order) != 3 {
		t.Errorf("second Close = %v after %d closes; want nil and nothing closed again", err, len(order))
	}
}
