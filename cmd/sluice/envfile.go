package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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
	vars, err := godotenv.Read(path)
	var perr *fs.PathError
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil
	case errors.As(err, &perr): // opening or reading it: the error names only the path
		return usagef("--env-file: %v", err)
	default: // the parser's messages quote the file's text
		return usagef("--env-file %s: not a dotenv file; write one KEY=VALUE per line (`export KEY=VALUE` and # comments are allowed, values may be quoted)", path)
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); set {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("--env-file %s: setting a variable: %w", path, err)
		}
	}
	return nil
}
