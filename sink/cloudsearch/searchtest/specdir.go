package searchtest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FindSpecDir returns the folder of the official REST definitions (the
// swagger files searchindex.json and searchservice.json) that dir names:
// dir itself when it holds them; else, as in a copy of the azure-search-spec
// folder, which has one subfolder per api-version, its subfolder named
// APIVersion, the version this server emulates; else its only subfolder
// that holds them. Otherwise it returns a *SpecDirError that says which
// folder it wants.
func FindSpecDir(dir string) (string, error) {
	missing := lackSpec(dir)
	if missing == nil {
		return dir, nil
	}
	if sub := filepath.Join(dir, APIVersion); lackSpec(sub) == nil {
		return sub, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", &SpecDirError{Dir: dir, Err: err}
	}
	var found []string
	for _, e := range entries {
		if e.IsDir() && lackSpec(filepath.Join(dir, e.Name())) == nil {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 1:
		return filepath.Join(dir, found[0]), nil
	case 0:
		return "", &SpecDirError{Dir: dir, Err: missing}
	}
	return "", &SpecDirError{Dir: dir, Versions: found}
}

// lackSpec returns nil if dir holds every swagger file the server reads,
// else why the first one it lacks is not there.
func lackSpec(dir string) error {
	for _, f := range specFileNames() {
		p := filepath.Join(dir, f)
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
	}
	return nil
}

// specFileNames are the names of the swagger files the server reads, sorted.
func specFileNames() []string { return slices.Sorted(maps.Keys(specFiles)) }

// SpecDirError reports a folder given as Options.SpecDir (the --spec-dir
// of `sluice devserver search`) where FindSpecDir finds no definitions.
type SpecDirError struct {
	Dir string // the folder as given
	// Versions are the subfolders holding definitions, when there are
	// several and none is APIVersion's.
	Versions []string
	Err      error // why the definitions were not found there, if any
}

// Error names the folder, says what is missing, and which folder to give.
func (e *SpecDirError) Error() string {
	want := fmt.Sprintf("give the folder of the api-version %s definitions, which holds %s (such as azure-search-spec/%s), or the folder above it",
		APIVersion, strings.Join(specFileNames(), " and "), APIVersion)
	if len(e.Versions) > 0 {
		return fmt.Sprintf("%s holds the REST definitions of api-versions %s, but not of %s, which this server emulates: %s",
			e.Dir, strings.Join(e.Versions, ", "), APIVersion, want)
	}
	return fmt.Sprintf("no Cloud AI Search REST definitions in %s (%v): %s", e.Dir, e.Err, want)
}

// Unwrap returns the underlying error, such as one wrapping fs.ErrNotExist.
func (e *SpecDirError) Unwrap() error { return e.Err }
