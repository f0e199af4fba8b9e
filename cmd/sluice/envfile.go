package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/joho/godotenv"
)

// defaultEnvFile is the dotenv file that every command reads, when it
// exists, before its configuration: where the seed's applications keep
// their keys (CLOUD_AI_SEARCH_KEY, OPENAI_API_KEY and the like).
const defaultEnvFile = ".env"

// loadEnvFile sets the variables of the dotenv file at path (KEY=VALUE
// lines, `export` and # comments allowed) that the environment does not set
// already: a variable exported in the shell or by a service manager wins
// over the file, as with any dotenv loader. A missing file is not an error
// unless it was named (--env-file). Errors name the file but never quote
// it, since it holds secrets.
//
// A folder at the default path is skipped, as a missing file is: .env is
// also a common name for a Python virtual environment (python -m venv
// .env), which must not stop every command. Named, a folder is an error.
func loadEnvFile(path string, named bool) error {
	if !named {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return nil
		}
	}
	label := "--env-file " + path
	if !named {
		label = path + " (the dotenv file read by default; --env-file names another)"
	}
	vars, err := godotenv.Read(path)
	var perr *fs.PathError
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil
	case errors.As(err, &perr): // opening or reading it: the error names only the path
		fix := "make it a readable dotenv file, or name another with --env-file (--env-file /dev/null reads none)"
		if named {
			fix = "name a dotenv file that exists and can be read, or leave --env-file out (--env-file /dev/null reads none)"
		}
		return usagef("%s: %v; %s", label, perr.Err, fix)
	default: // the parser's messages quote the file's text
		return usagef("%s: not a dotenv file; write one KEY=VALUE per line (`export KEY=VALUE` and # comments are allowed, values may be quoted)", label)
	}
	// Names first, so that a bad line sets nothing. A name is no secret:
	// it is quoted; a value never is.
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if !envName(k) {
			return usagef("%s: %q is not a variable name; use letters, digits and underscores, not starting with a digit, as in OPENAI_API_KEY=...", label, k)
		}
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); set {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("%s: setting %s: %w", label, k, err)
		}
	}
	return nil
}

// envName reports whether k is a portable environment variable name:
// letters, digits and underscores, not starting with a digit.
func envName(k string) bool {
	for i, c := range k {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return k != ""
}
