package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files under root. A key ending in "/" makes a directory;
// a value starting with "->" makes a symlink to the rest of the value.
func writeTree(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for name, body := range tree {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walkResult is what a walk produced: ids of files and failures by id.
type walkResult struct {
	files    []string
	failures map[string]error
	all      []File
}

func walkAll(t *testing.T, cfg Config) walkResult {
	t.Helper()
	res := walkResult{failures: map[string]error{}}
	err := Walk(context.Background(), cfg, func(f File, err error) error {
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("walk passed a %T, want *FileError: %v", err, err)
			}
			if fe.Path != f.ID {
				t.Errorf("FileError.Path %q != File.ID %q", fe.Path, f.ID)
			}
			res.failures[f.ID] = err
			return nil
		}
		res.files = append(res.files, f.ID)
		res.all = append(res.all, f)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return res
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
