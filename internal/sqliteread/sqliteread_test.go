package sqliteread

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	errAccess = errors.New("access")
	errOther  = errors.New("other")
)

func isAccess(err error) bool { return errors.Is(err, errAccess) }

// TestOpen: Open reads with locks, and reads as immutable only when that
// failed for want of access and no -wal file holds content; when the
// immutable read fails for want of access too, the first error is
// returned.
func TestOpen(t *testing.T) {
	tests := []struct {
		name         string
		wal          string // content of the -wal file; "-" for none
		locked       error  // open(false)'s error
		unlocked     error  // open(true)'s error
		wantUnlocked bool   // open(true) is called
		wantErr      error
	}{
		{name: "locked read works", wal: "-"},
		{name: "not the file's access", wal: "-", locked: errOther, wantErr: errOther},
		{name: "no -wal: immutable", wal: "-", locked: errAccess, wantUnlocked: true},
		{name: "empty -wal: immutable", wal: "", locked: errAccess, wantUnlocked: true},
		{name: "-wal with content: no immutable read", wal: "frames", locked: errAccess, wantErr: errAccess},
		{name: "immutable read refused too: the first error", wal: "-", locked: errAccess,
			unlocked: errors.Join(errAccess, errors.New("second")), wantUnlocked: true, wantErr: errAccess},
		{name: "immutable read fails otherwise: its error", wal: "-", locked: errAccess, unlocked: errOther,
			wantUnlocked: true, wantErr: errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			if tt.wal != "-" {
				if err := os.WriteFile(path+"-wal", []byte(tt.wal), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var calls []bool
			got, err := Open(path, func(unlocked bool) (string, error) {
				calls = append(calls, unlocked)
				if unlocked {
					return "unlocked", tt.unlocked
				}
				return "locked", tt.locked
			}, isAccess)
			if tt.wantUnlocked != (len(calls) == 2) {
				t.Errorf("calls %v; want the immutable read %v", calls, tt.wantUnlocked)
			}
			if tt.wantErr != nil {
				if err != tt.wantErr { // the very error, not the immutable read's
					t.Errorf("err = %v; want %v", err, tt.wantErr)
				}
				return
			}
			want := "locked"
			if tt.wantUnlocked {
				want = "unlocked"
			}
			if err != nil || got != want {
				t.Errorf("Open = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestDSN: the path is escaped, mode=ro is always set and immutable=1 only
// when unlocked, and the pragmas follow in order.
func TestDSN(t *testing.T) {
	tests := []struct {
		path     string
		unlocked bool
		pragmas  []string
		want     string
	}{
		{"/data/index.db", false, []string{"busy_timeout(10000)"}, "file:/data/index.db?_pragma=busy_timeout%2810000%29&mode=ro"},
		{"/data/index.db", true, nil, "file:/data/index.db?immutable=1&mode=ro"},
		{"/data/a?b#c.db", false, []string{"busy_timeout(1)", "cache_size(-1024)"},
			"file:/data/a%3Fb%23c.db?_pragma=busy_timeout%281%29&_pragma=cache_size%28-1024%29&mode=ro"},
	}
	for _, tt := range tests {
		if got := DSN(tt.path, tt.unlocked, tt.pragmas...); got != tt.want {
			t.Errorf("DSN(%q, %v, %q) =\n  %s\nwant\n  %s", tt.path, tt.unlocked, tt.pragmas, got, tt.want)
		}
	}
}

// TestUnlockedError: the message says to try again and the cause stays
// reachable.
func TestUnlockedError(t *testing.T) {
	err := error(&UnlockedError{Err: errOther})
	if !errors.Is(err, errOther) || !strings.Contains(err.Error(), "other (read without locks") ||
		!strings.Contains(err.Error(), "run the command again first") {
		t.Errorf("UnlockedError = %q; want the cause, wrapped, and the advice", err)
	}
}
