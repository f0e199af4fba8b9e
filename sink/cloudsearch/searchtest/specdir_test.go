package searchtest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// specTree makes a folder with the given subfolders, each holding empty
// swagger files, and returns it. FindSpecDir only looks for the files.
func specTree(t *testing.T, versions ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, v := range versions {
		dir := filepath.Join(root, v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range specFileNames() {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestFindSpecDir checks which folder of definitions a --spec-dir (or
// Options.SpecDir) names: the folder itself, the version subfolder of the
// api-version the server emulates, or the only version subfolder; and
// that the error otherwise says which folder to give, without naming a
// Go field a command-line user has never seen.
func TestFindSpecDir(t *testing.T) {
	tests := []struct {
		name    string
		root    func(t *testing.T) string
		want    string   // below root; "" when an error is wanted
		words   []string // in the error
		notFind bool     // the error wraps fs.ErrNotExist
	}{
		{"the version folder", func(t *testing.T) string { return filepath.Join(specTree(t, APIVersion), APIVersion) }, ".", nil, false},
		{"its parent", func(t *testing.T) string { return specTree(t, APIVersion) }, APIVersion, nil, false},
		{"a parent with several versions", func(t *testing.T) string { return specTree(t, "2023-11-01", APIVersion, "2025-09-01") }, APIVersion, nil, false},
		{"a parent with one other version", func(t *testing.T) string { return specTree(t, "2025-09-01") }, "2025-09-01", nil, false},
		{"several other versions", func(t *testing.T) string { return specTree(t, "2023-11-01", "2025-09-01") }, "",
			[]string{"2023-11-01, 2025-09-01", "not of " + APIVersion, "give the folder of the api-version " + APIVersion + " definitions"}, false},
		{"an empty folder", func(t *testing.T) string { return t.TempDir() }, "",
			[]string{"no Cloud AI Search REST definitions in", "searchindex.json and searchservice.json", "azure-search-spec/" + APIVersion, "or the folder above it"}, true},
		{"no such folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, "", []string{"no Cloud AI Search REST definitions in"}, true},
		{"one of the two files", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "searchindex.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "", []string{"searchservice.json: no such file"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.root(t)
			got, err := FindSpecDir(root)
			if tt.want != "" {
				if want := filepath.Join(root, tt.want); err != nil || got != want {
					t.Fatalf("FindSpecDir(%s) = %q, %v; want %q", root, got, err, want)
				}
				return
			}
			var se *SpecDirError
			if !errors.As(err, &se) || se.Dir != root {
				t.Fatalf("FindSpecDir(%s) = %q, %v; want a *SpecDirError", root, got, err)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "Options.SpecDir") {
				t.Errorf("error %q names a Go field", err)
			}
			if errors.Is(err, fs.ErrNotExist) != tt.notFind {
				t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v, want %v", err, !tt.notFind, tt.notFind)
			}
		})
	}
}

// TestSpecDirParentOfTheOfficialDefinitions gives the server the folder
// above the official definitions, as `sluice devserver search --spec-dir
// azure-search-spec` does: it loads the 2024-07-01 ones and validates.
func TestSpecDirParentOfTheOfficialDefinitions(t *testing.T) {
	needSpec(t)
	s := NewServer(Options{SpecDir: filepath.Dir(specDir)})
	if err := s.SpecError(); err != nil {
		t.Fatalf("SpecError() = %v", err)
	}
	if got := s.SpecDir(); got != filepath.Join(filepath.Dir(specDir), APIVersion) {
		t.Errorf("SpecDir() = %q, want the %s folder", got, APIVersion)
	}
	if s.schemas == nil {
		t.Error("no schemas loaded")
	}
}
