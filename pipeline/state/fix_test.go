package state

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// TestPathIsEscaped opens state files whose names hold URI delimiters: each
// must be written under its own name, not a prefix of it.
func TestPathIsEscaped(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"st#1.db", "st?mode=ro.db", "a%20b.db", "sp ace.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			s := open(t, path, "x")
			if err := begin(t, s).Commit(ctx, "a.md", Stamp{Hash: "h"}, ""); err != nil {
				t.Fatal(err)
			}
			s.Close()
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Contains(names, name) || slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, name) }) {
				t.Fatalf("files written: %q, want %q (and its -wal, -shm)", names, name)
			}
			if d, ok, err := open(t, path, "x").Doc(ctx, "a.md"); err != nil || !ok || d.Hash != "h" {
				t.Errorf("reopened: %+v %v %v", d, ok, err)
			}
		})
	}
}

// TestTouchAndClearFailure: a document found unchanged leaves the
// dead-letter table; Reset drops a record and its pending ids but keeps
// the dead letter.
func TestTouchAndClearFailure(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "state.db"), "x")
	run := begin(t, s)
	for _, id := range []string{"a.md", "b.md", "c.md"} {
		if err := run.Ack(ctx, nodes(id, "n-"+id)); err != nil {
			t.Fatal(err)
		}
		if err := run.Commit(ctx, id, Stamp{Hash: "h"}, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Fail(ctx, id, "binary", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Touch(ctx, "a.md", time.Unix(5, 0), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearFailure(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	dead := begin(t, s)
	if err := dead.Intend(ctx, nodes("c.md", "n-new")); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(ctx, "c.md"); err != nil {
		t.Fatal(err)
	}
	fails, err := s.Failures(ctx)
	if err != nil || len(fails) != 1 || fails[0].ID != "c.md" {
		t.Errorf("dead letters = %+v, %v; want c.md only", fails, err)
	}
	if d, ok, _ := s.Doc(ctx, "a.md"); !ok || !d.ModTime.Equal(time.Unix(5, 0)) || len(d.NodeIDs) != 1 {
		t.Errorf("touched record = %+v, %v", d, ok)
	}
	if _, ok, _ := s.Doc(ctx, "c.md"); ok {
		t.Error("Reset kept the record")
	}
	if acked, intended, _ := s.Pending(ctx, "c.md"); len(acked)+len(intended) != 0 {
		t.Errorf("Reset kept pending ids %v %v", acked, intended)
	}
}

// TestModelChangedRemedy: another model of the same dimensions is
// re-embedded by --full; other dimensions need a new index, which --full
// alone cannot give.
func TestModelChangedRemedy(t *testing.T) {
	built := Embedder{Provider: "hash", Dimensions: 1536}
	for _, tt := range []struct {
		name       string
		want       Embedder
		say, avoid []string
	}{
		{"dimensions", Embedder{Provider: "hash", Dimensions: 256},
			[]string{"--full alone cannot change", "`sluice index delete`, with this command's --config if it has one", "and run again", "sink.local.path", "sink.cloudsearch.indexName", "embedder.dimensions back to 1536"},
			// Deleting the index clears its records: a plain run rebuilds it.
			[]string{"run again with --full"}},
		{"model", Embedder{Provider: "openai", Model: "text-embedding-3-small", Dimensions: 1536},
			[]string{"run again with --full to re-embed everything", "new index"},
			[]string{"cannot change"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := (&ModelChangedError{Scope: "local:/x/index.db", Built: built, Want: tt.want}).Error()
			for _, s := range tt.say {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
			for _, s := range tt.avoid {
				if strings.Contains(msg, s) {
					t.Errorf("message %q says %q", msg, s)
				}
			}
		})
	}
}

// coded is an error with an SQLite result code, as the driver's.
type coded int

func (c coded) Error() string { return fmt.Sprintf("sqlite error (%d)", int(c)) }
func (c coded) Code() int     { return int(c) }

// TestFileErrorsSayWhatToDo checks the message of each kind of file fault:
// it names the file and state.path and says what to do. Which result codes
// make which fault (extended and wrapped ones too) is tested once, in
// internal/sqlitefault.
func TestFileErrorsSayWhatToDo(t *testing.T) {
	s := &Store{path: "/data/state.db"}
	for _, tt := range []struct {
		name string
		err  error
		kind error // nil: not the file's fault
		say  string
	}{
		{"cantopen", coded(sqlite3.SQLITE_CANTOPEN), ErrAccess, "check the permissions of /data/state.db (state.path)"},
		{"readonly", coded(sqlite3.SQLITE_READONLY), ErrAccess, "check the permissions of /data/state.db (state.path)"},
		{"corrupt", coded(sqlite3.SQLITE_CORRUPT), ErrDamaged, "state: /data/state.db: sqlite error (11); /data/state.db (state.path) is damaged: delete it and run with --full"},
		{"not a database", coded(sqlite3.SQLITE_NOTADB), ErrDamaged, "(state.path) is damaged or not a SQLite database"},
		{"full", coded(sqlite3.SQLITE_FULL), ErrFull, "state: /data/state.db: sqlite error (13); the disk holding /data/state.db (state.path) is full: free space on it (not by deleting the file's -wal"},
		{"busy", coded(sqlite3.SQLITE_BUSY), nil, "state: sqlite error (5)"},
		{"other", errors.New("boom"), nil, "state: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.fail(tt.err)
			if tt.kind == nil {
				var fe *FileError
				if errors.As(err, &fe) || err.Error() != tt.say {
					t.Errorf("fail = %v, want %q", err, tt.say)
				}
				return
			}
			if !errors.Is(err, tt.kind) || !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.say) {
				t.Errorf("fail = %v; want %v saying %q", err, tt.kind, tt.say)
			}
			if tt.kind == ErrDamaged && !strings.Contains(err.Error(), "set state.path to a new file") {
				t.Errorf("fail = %v; want it to offer a new state.path", err)
			}
		})
	}
}

// TestDamagedFile overwrites a state file's pages with garbage: Open, or
// the first read, fails with ErrDamaged naming the file and state.path.
func TestDamagedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path, "x")
	run := begin(t, s)
	for i := range 200 {
		id := fmt.Sprintf("doc-%03d.md", i)
		if err := run.Ack(ctx, nodes(id, "a"+id, "b"+id)); err != nil {
			t.Fatal(err)
		}
		if err := run.Commit(ctx, id, Stamp{Hash: strings.Repeat("h", 64)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4096*4 {
		t.Fatalf("state file of %d bytes; the test needs more pages", len(data))
	}
	copy(data[100:], bytes.Repeat([]byte{0xA5}, len(data)-100))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path, "x")
	if err == nil {
		defer s2.Close()
		_, err = s2.Stamps(ctx)
	}
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" (state.path)") || !strings.Contains(err.Error(), "delete it and run with --full") {
		t.Fatalf("damaged state file: %v; want ErrDamaged naming %s and state.path", err, path)
	}
}

// TestReadOnlyFile: a state file that cannot be written is a matter of
// permissions, not damage.
func TestReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only files")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	open(t, path, "x").Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o444); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			os.Chmod(p, 0o644)
		}
	})
	s, err := Open(ctx, path, "x")
	if err == nil {
		defer s.Close()
		err = begin(t, s).Commit(ctx, "a.md", Stamp{}, "")
	}
	if !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), "check the permissions of "+path+" (state.path)") {
		t.Fatalf("read-only state file: %v; want ErrAccess saying to check the permissions of %s", err, path)
	}
}

// TestFullDisk: a write to a manifest whose disk is full fails with
// ErrFull, not ErrAccess (a watch retries it instead of stopping for
// good), naming the file and state.path and saying to free space; what was
// written before is kept, and once there is room the write succeeds.
func TestFullDisk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path, "local:/x")
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"before": {1}}); err != nil {
		t.Fatal(err)
	}
	vecs := make(map[string][]float32)
	for i := range 200 {
		vecs[fmt.Sprint("k", i)] = make([]float32, 1536)
	}
	testenv.LimitPages(t, s.db, 2)
	err := s.SaveVectors(ctx, "m", vecs)
	if !errors.Is(err, ErrFull) || errors.Is(err, ErrAccess) || errors.Is(err, ErrDamaged) {
		t.Fatalf("SaveVectors into a full manifest = %v; want ErrFull alone", err)
	}
	for _, want := range []string{"state: " + path + ": ", "database or disk is full (13); the disk holding " + path + " (state.path) is full: free space on it", "-wal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("SaveVectors = %v\nwant it to say %q", err, want)
		}
	}
	testenv.LimitPages(t, s.db, 1<<20) // space freed
	if err := s.SaveVectors(ctx, "m", vecs); err != nil {
		t.Fatalf("SaveVectors once there is room: %v", err)
	}
	got, err := s.LoadVectors(ctx, "m", []string{"before", "k0", "k199"})
	if err != nil || len(got) != 3 {
		t.Errorf("LoadVectors = %d vectors, %v; want 3", len(got), err)
	}
}

// TestCloseReportsAFullLastCheckpoint: when a full disk keeps Close's last
// checkpoint from copying the -wal into the state file, Close says so
// (ErrFull, naming the file and state.path, saying that nothing is lost),
// still releases the write lock, and the file reopens with every record;
// any other failure of the checkpoint is not reported.
func TestCloseReportsAFullLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		err  error // of the checkpoint
		want []string
	}{
		{"full", coded(sqlite3.SQLITE_FULL), []string{"state: last checkpoint of ", "sqlite error (13); the disk holding ", " (state.path) is full: nothing is lost: its latest writes stay in its -wal file"}},
		{"busy", coded(sqlite3.SQLITE_BUSY), nil},
		{"done", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			s, err := OpenForWriting(ctx, path, "local:/x")
			if err != nil {
				t.Fatal(err)
			}
			if err := begin(t, s).Commit(ctx, "a.md", Stamp{Hash: "h"}, ""); err != nil {
				t.Fatal(err)
			}
			calls := 0
			real := checkpoint
			checkpoint = func(ctx context.Context, db *sql.DB) error {
				calls++
				if tt.err != nil {
					return tt.err
				}
				return real(ctx, db)
			}
			defer func() { checkpoint = real }()
			err = s.Close()
			checkpoint = real
			if calls != 1 {
				t.Errorf("Close checkpointed %d times, want 1", calls)
			}
			if tt.want == nil {
				if err != nil {
					t.Errorf("Close = %v, want nil", err)
				}
			} else {
				var fe *FileError
				if !errors.Is(err, ErrFull) || !errors.As(err, &fe) || fe.Path != path {
					t.Errorf("Close = %v; want a *FileError of ErrFull for %s", err, path)
				}
				for _, w := range tt.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("Close = %v\nwant it to say %q", err, w)
					}
				}
			}
			// The lock is released: another writer opens the file.
			r, err := OpenForWriting(ctx, path, "local:/x")
			if err != nil {
				t.Fatalf("OpenForWriting after Close: %v", err)
			}
			defer r.Close()
			if _, ok, err := r.Doc(ctx, "a.md"); err != nil || !ok {
				t.Errorf("Doc(a.md) after reopening = %v, %v; want the record", ok, err)
			}
		})
	}
}
