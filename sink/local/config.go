package local

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath is the default database file, relative to the working directory.
const DefaultPath = ".sluice/index.db"

// Config configures the local store; it is the sink.local section of the
// configuration file.
type Config struct {
	// Path is the SQLite database file. Missing parent directories are
	// created by Open. Default ".sluice/index.db" (DefaultPath).
	Path string `yaml:"path"`
}

// DefaultConfig returns the configuration with every default applied.
func DefaultConfig() Config {
	return Config{Path: DefaultPath}
}

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	return c
}

// Validate reports the first setting that is wrong, as a *ConfigError naming
// it (for example sink.local.path).
func (c Config) Validate() error {
	p := c.Path
	switch {
	case strings.TrimSpace(p) == "":
		return &ConfigError{Setting: "sink.local.path", Reason: "is empty", Hint: "set it to a database file such as " + DefaultPath}
	case p == ":memory:" || strings.HasPrefix(p, "file:"):
		return &ConfigError{Setting: "sink.local.path", Reason: "is " + quote(p) + ", a SQLite URI", Hint: "set it to a plain file path such as " + DefaultPath}
	case strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)):
		return &ConfigError{Setting: "sink.local.path", Reason: quote(p) + " names a directory", Hint: "name a file inside it, such as " + filepath.Join(p, "index.db")}
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return &ConfigError{Setting: "sink.local.path", Reason: quote(p) + " is a directory", Hint: "name a file inside it, such as " + filepath.Join(p, "index.db")}
	}
	return nil
}

// ErrInvalidConfig marks a configuration error; *ConfigError wraps it.
var ErrInvalidConfig = errors.New("local: invalid configuration")

// ConfigError reports a setting that is wrong and how to fix it.
type ConfigError struct {
	Setting string // the setting's full key, e.g. sink.local.path
	Reason  string
	Hint    string
}

// Error returns the message of the ConfigError.
func (e *ConfigError) Error() string {
	s := "local: " + e.Setting + " " + e.Reason
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
