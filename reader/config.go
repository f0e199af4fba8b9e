package reader

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultInclude are the include patterns used when source.include is empty:
// Markdown files (*.md) at any depth. Other text files are read only when
// listed, e.g. include: ["**/*.md", "**/*.txt", "**/*.rst"].
var DefaultInclude = []string{"**/*.md"}

// Config selects the files of a source folder. Its yaml keys are those of the
// `source` section of the configuration file.
//
// Patterns use github.com/bmatcuk/doublestar/v4 syntax and are matched
// against the root-relative path with '/' separators:
//
//   - A pattern without '/' matches a name at any depth ("*.md" is "**/*.md").
//   - A pattern with a '/' is anchored at the root ("docs/*.md" matches
//     docs/a.md but not x/docs/a.md); a leading "/" or "./" is ignored.
//   - An exclude pattern that matches a directory excludes everything below it
//     ("drafts" skips every folder named drafts).
//   - Hidden entries (a name starting with '.', such as .git or .sluice) are
//     skipped, files and folders alike, unless an include pattern names a
//     hidden path explicitly with a segment starting with '.'
//     (".github/**/*.md", "**/.notes/*.md"). Exclude patterns still apply.
type Config struct {
	// Dir is the root folder to read. Default ".".
	Dir string `yaml:"dir"`
	// Include lists the glob patterns of files to read. Default DefaultInclude
	// (used whenever the list is empty).
	Include []string `yaml:"include"`
	// Exclude lists glob patterns of files and folders to skip, applied after
	// Include. Default none.
	Exclude []string `yaml:"exclude"`
	// Metadata adds metadata to documents by path (see MetadataRule).
	// Default none.
	Metadata []MetadataRule `yaml:"metadata"`
	// ExcludeFileMetadata lists keys of the file metadata (file_path,
	// file_name, file_type, file_size, creation_date, last_modified_date)
	// that documents leave out. Default none: every document carries all
	// six, as with LlamaIndex's directory reader. A change of a document's
	// metadata rewrites the metadata of each of its chunks (without
	// embedding them again), so a file that grows while it is watched, a
	// log, is better read without file_size and last_modified_date, which
	// change with every write.
	ExcludeFileMetadata []string `yaml:"excludeFileMetadata"`
	// Own lists the files Sluice itself writes while it reads the folder,
	// its manifest (state.path) and a local store (sink.local.path), by
	// path: absolute, or relative to the working directory. Neither such a
	// file nor one SQLite or Sluice keeps beside it (its -wal, -shm and
	// -journal files, lock files named after it) is a document, whatever
	// the patterns select, nor is a symbolic link to one (or a path through
	// a link to its folder): kept inside the folder, they
	// would be read as binary documents that fail, and a watch would see
	// each of its own writes as a change, round after round. It is no
	// setting of the configuration file: cmd/sluice fills it in.
	Own []string `yaml:"-"`
}

// DefaultConfig returns the default source settings: the current directory
// and DefaultInclude.
func DefaultConfig() Config {
	return Config{}.WithDefaults()
}

// WithDefaults returns c with its empty settings replaced by their defaults.
func (c Config) WithDefaults() Config {
	if c.Dir == "" {
		c.Dir = "."
	}
	if len(c.Include) == 0 {
		c.Include = append([]string(nil), DefaultInclude...)
	}
	return c
}

// Validate reports the first invalid setting as a *ConfigError naming it
// ("source.dir", "source.include[2]", ...). It does not touch the file
// system; Walk reports a missing folder. Call WithDefaults first to accept
// empty settings.
func (c Config) Validate() error {
	if strings.TrimSpace(c.Dir) == "" {
		return &ConfigError{Setting: "source.dir", Reason: `is empty; set it to the folder to read (default ".")`}
	}
	if len(c.Include) == 0 {
		return &ConfigError{Setting: "source.include", Reason: "is empty, so no file would be read; list patterns such as \"*.md\" or remove the key for the defaults"}
	}
	if err := validatePatterns("source.include", c.Include); err != nil {
		return err
	}
	if err := validatePatterns("source.exclude", c.Exclude); err != nil {
		return err
	}
	if err := validateMetadata(c.Metadata); err != nil {
		return err
	}
	return validateFileKeys(c.ExcludeFileMetadata)
}

func validatePatterns(key string, patterns []string) error {
	for i, p := range patterns {
		if err := validatePattern(key+"["+strconv.Itoa(i)+"]", p); err != nil {
			return err
		}
	}
	return nil
}

// validatePattern checks one glob; setting names it in the error.
func validatePattern(setting, p string) error {
	if strings.TrimSpace(p) == "" {
		return &ConfigError{Setting: setting, Reason: "is an empty pattern; remove it or write a glob such as \"*.md\""}
	}
	if !doublestar.ValidatePattern(normalizePattern(p)) {
		return &ConfigError{Setting: setting, Reason: strconv.Quote(p) + " is not a valid glob pattern; check its brackets [] and braces {}"}
	}
	if slices.Contains(strings.Split(normalizePattern(p), "/"), "..") {
		return &ConfigError{Setting: setting, Reason: strconv.Quote(p) + " has a .. segment, which no path matches: patterns are relative to the folder read (source.dir); " +
			"point source.dir (or the folder argument) at the folder above instead"}
	}
	return nil
}

// Match reports whether the root-relative, '/'-separated path relPath is
// selected by c's include and exclude patterns and the hidden-entry rule.
// Invalid patterns match nothing; call Validate to report them. Empty
// patterns lists get their defaults.
func (c Config) Match(relPath string) bool {
	return c.Matcher()(relPath)
}

// Matcher returns Match with c's patterns compiled once, for a caller that
// tests many paths.
func (c Config) Matcher() func(relPath string) bool {
	return compile(c.WithDefaults()).match
}

// Excludes reports whether c's exclude patterns leave out the
// root-relative, '/'-separated path relPath or one of its folders, or
// relPath is one of the files of Own (or beside one), whatever the include
// patterns say.
func (c Config) Excludes(relPath string) bool {
	m := compile(Config{Dir: c.Dir, Exclude: c.Exclude, Own: c.Own}) // only these are needed
	return m.isOwn(relPath) || m.excluded(relPath)
}
