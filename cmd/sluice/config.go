package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/internal/credential"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/watch"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/cloudsearch"
	"github.com/sluice-dev/sluice/sink/local"
	"github.com/sluice-dev/sluice/splitter"
)

// defaultConfigFile is used when --config is not given and it exists.
const defaultConfigFile = "sluice.yaml"

// configEnv names the environment variable that may point at a config file;
// --config wins over it.
const configEnv = "SLUICE_CONFIG"

// Config is the whole configuration file (see configs/local.yaml). Each
// section is the owning package's own settings struct; key names are part
// of the command-line contract.
type Config struct {
	Source   reader.Config   `yaml:"source"`
	Splitter splitter.Config `yaml:"splitter"`
	Embedder embedder.Config `yaml:"embedder"`
	Sink     SinkConfig      `yaml:"sink"`
	State    StateConfig     `yaml:"state"`
	Pipeline PipelineConfig  `yaml:"pipeline"`
	Watch    watch.Config    `yaml:"watch"`

	// overridden lists the settings of the file that the environment
	// replaced with other values (applyEnv), for warnEnvOverrides; nil
	// when there are none.
	overridden *envOverrides
}

// The values of sink.type.
const (
	sinkLocal       = "local"       // the local on-disk store, the default
	sinkCloudSearch = "cloudsearch" // Cloud AI Search (Azure AI Search)
)

// SinkConfig selects and configures the vector store.
type SinkConfig struct {
	// Type is local (default) or cloudsearch.
	Type        string             `yaml:"type"`
	Local       local.Config       `yaml:"local"`
	CloudSearch cloudsearch.Config `yaml:"cloudsearch"`
}

// StateConfig locates the run manifest used by incremental runs.
type StateConfig struct {
	// Path of the state database; default .sluice/state.db.
	Path string `yaml:"path"`
}

// PipelineConfig tunes the pipeline itself.
type PipelineConfig struct {
	// MemoryBudgetMB bounds the source text held in memory; default 64.
	MemoryBudgetMB int `yaml:"memoryBudgetMB"`
	// SplitConcurrency is the number of documents split at once; default: one per core.
	SplitConcurrency int `yaml:"splitConcurrency"`
}

// DefaultConfig is the embedded default: local store under ./.sluice/, the
// local hashing embedder, LlamaIndex's default chunking.
func DefaultConfig() Config {
	return Config{
		Source:   reader.DefaultConfig(),
		Splitter: splitter.DefaultConfig(),
		Embedder: embedder.DefaultConfig(),
		Sink: SinkConfig{
			Type:        sinkLocal,
			Local:       local.DefaultConfig(),
			CloudSearch: cloudsearch.DefaultConfig(),
		},
		State:    StateConfig{Path: ".sluice/state.db"},
		Pipeline: PipelineConfig{MemoryBudgetMB: 64},
		Watch:    watch.DefaultConfig(),
	}
}

// ConfigError is a configuration problem; the command exits with code 2.
type ConfigError struct {
	File string // the config file, "" for the embedded default
	Err  error
}

func (e *ConfigError) Error() string {
	if e.File == "" {
		return "configuration: " + e.Err.Error()
	}
	return "configuration " + e.File + ": " + e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// canonicalName returns the name of names that equals s in any letter
// case, or s itself when none does.
func canonicalName(s string, names ...string) string {
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n
		}
	}
	return s
}

// loadConfig reads the configuration: the file named by flag, else by
// $SLUICE_CONFIG, else ./sluice.yaml if present, else the embedded default.
// Keys absent from the file keep their defaults (an empty file keeps them
// all); unknown keys are errors. The environment then wins over the file
// (applyEnv), as the precedence flag > environment > file > default asks;
// the settings it overrides with other values are kept in the Config for
// warnEnvOverrides.
func loadConfig(flag string) (Config, string, error) {
	cfg, path, err := readConfig(flag)
	if err == nil {
		// Names, whose letter case does not matter: CloudSearch, OpenAI.
		// A name that is none of them is kept as written, for its error.
		cfg.Sink.Type = canonicalName(cfg.Sink.Type, sinkLocal, sinkCloudSearch)
		cfg.Embedder.Provider = canonicalName(cfg.Embedder.Provider, embedder.ProviderHash,
			embedder.ProviderInstant, embedder.ProviderOpenAI, embedder.ProviderAzureOpenAI)
		// 0 and "" mean the defaults, as the embedder reads them: every
		// command compares the same length with the store's, and the
		// manifest records the provider that ran.
		if cfg.Embedder.Dimensions == 0 {
			cfg.Embedder.Dimensions = embedder.DefaultDimensions
		}
		if cfg.Embedder.Provider == "" {
			cfg.Embedder.Provider = embedder.ProviderHash
		}
		if list := applyEnv(&cfg, os.Getenv); len(list) > 0 {
			cfg.overridden = &envOverrides{file: path, list: list}
		}
	}
	return cfg, path, err
}

// applyEnv lets the environment override the file: a Cloud AI Search
// endpoint, admin key or API version set in its variable (endpointEnv,
// keyEnv, CLOUD_SEARCH_API_VERSION) replaces the one in the file. The
// setting is cleared so that the store reads the variable itself and its
// errors name the variable; except a key beside a credential that does not
// use it (default, managedIdentity), which no variable replaces: the store
// warns that it is not used, whatever keyEnv holds.
//
// It returns the overrides worth a warning (warnEnvOverrides): those of a
// setting the file gives another value than the variable, when the store
// is Cloud AI Search and uses the setting (the key with credential key
// only). A setting the file leaves empty, or gives the same value (for
// the endpoint, up to trailing slashes and letter case; for the key and
// the API version, up to the white space around them, as the store reads
// them), is no surprise. These are all the variables that override a
// setting of the file: the embedder reads only its API key from the
// environment (embedder.apiKeyEnv names the variable; the file holds no
// key), and embedder.managedIdentityClientId, when set, wins over
// AZURE_CLIENT_ID.
func applyEnv(cfg *Config, getenv func(string) string) []envOverride {
	cs := &cfg.Sink.CloudSearch
	names := cs.WithDefaults() // the variables the store reads
	credential, _ := cloudsearch.ParseCredentialKind(string(cs.Credential))
	var list []envOverride
	for _, o := range []struct {
		env, setting string
		value        *string
		secret       bool
		used         bool
		same         func(env, file string) bool
	}{
		{names.EndpointEnv, "endpoint", &cs.Endpoint, false, true, sameEndpoint},
		{names.KeyEnv, "key", &cs.Key, true, credential == cloudsearch.KeyCredential, sameTrimmed},
		{cloudsearch.EnvAPIVersion, "apiVersion", &cs.APIVersion, false, true, sameTrimmed},
	} {
		env := getenv(o.env)
		if env == "" {
			continue
		}
		if file := *o.value; cfg.Sink.Type == sinkCloudSearch && o.used && strings.TrimSpace(file) != "" && !o.same(env, file) {
			ov := envOverride{env: o.env, setting: "sink.cloudsearch." + o.setting, secret: o.secret}
			if !o.secret {
				ov.envValue, ov.fileValue = env, file
				if o.setting == "endpoint" {
					ov.envValue, ov.fileValue = shownEndpoint(env), shownEndpoint(file)
				}
			}
			list = append(list, ov)
		}
		if o.used {
			*o.value = ""
		}
	}
	return list
}

// shownEndpoint returns the value of an endpoint setting for a message: as
// it is, or, when it may be a key (credential.EndpointShown), a phrase that
// does not show it.
func shownEndpoint(s string) string {
	if credential.EndpointShown(s) {
		return s
	}
	return credential.NotShown
}

// sameEndpoint reports whether two endpoints name one service: equal but
// for the white space around them, trailing slashes (which the store drops)
// and letter case (of a scheme and host name, which do not depend on it).
func sameEndpoint(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.TrimSpace(s), "/") }
	return strings.EqualFold(norm(a), norm(b))
}

// sameTrimmed reports whether a and b are equal but for the white space
// around them.
func sameTrimmed(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }

// envOverride is a setting of the configuration file that an environment
// variable replaced with another value.
type envOverride struct {
	env     string // the variable, e.g. CLOUD_AI_SEARCH_ENDPOINT
	setting string // the setting, e.g. sink.cloudsearch.endpoint
	// envValue and fileValue are the two values; both "" for a secret,
	// which no message shows.
	envValue, fileValue string
	secret              bool
}

// message is the warning about o, for the configuration file file.
func (o envOverride) message(file string) string {
	used := o.envValue + " is used, not " + o.fileValue
	if o.secret {
		used = "the variable's key is used, not the file's, which differs; neither is shown"
	}
	return fmt.Sprintf("%s overrides %s of %s: %s (the environment wins over the config file; to use the file's, "+
		"unset %s in the shell, or remove it from the dotenv file, ./.env unless --env-file names another)",
		o.env, o.setting, file, used, o.env)
}

// envOverrides are the overrides of one loading of the configuration.
type envOverrides struct {
	file string // the configuration file
	list []envOverride
	once sync.Once
}

// warnEnvOverrides logs a warning for each setting of cfg's file that an
// environment variable overrides with another value (applyEnv): a stale
// exported variable, or one of ./.env, would otherwise point the command
// at another service than the file names without a word. It logs them
// once per loading of the configuration, however often it is called; a
// command loads it once.
func (a *app) warnEnvOverrides(cfg Config) {
	o := cfg.overridden
	if o == nil || a.log == nil {
		return
	}
	o.once.Do(func() {
		for _, ov := range o.list {
			a.log.Warn(ov.message(o.file))
		}
	})
}

// readConfig finds and decodes the configuration file.
func readConfig(flag string) (Config, string, error) {
	cfg := DefaultConfig()
	path := flag
	if path == "" {
		path = os.Getenv(configEnv)
	}
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		}
	}
	if path == "" {
		return cfg, "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, path, &ConfigError{File: path, Err: fmt.Errorf("cannot read it: %w (check --config or $%s)", err, configEnv)}
	}
	if err := decodeConfig(data, &cfg); err != nil {
		return cfg, path, &ConfigError{File: path, Err: err}
	}
	return cfg, path, nil
}

// Validate checks every section; the first problem names its setting.
func (c *Config) Validate() error {
	checks := []func() error{
		c.Source.Validate,
		c.Splitter.Validate,
		c.Embedder.Validate,
		c.validateSink,
		c.Watch.Validate,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	if err := c.checkChunkFits(); err != nil {
		return err
	}
	if strings.TrimSpace(c.State.Path) == "" {
		return errors.New("state.path is empty; set it to the manifest file of incremental runs, such as .sluice/state.db (the default)")
	}
	if c.Pipeline.MemoryBudgetMB < 1 {
		return fmt.Errorf("pipeline.memoryBudgetMB is %d; it must be at least 1 (default 64)", c.Pipeline.MemoryBudgetMB)
	}
	if n := c.Pipeline.SplitConcurrency; n < 0 || n > pipeline.MaxSplitConcurrency {
		return fmt.Errorf("pipeline.splitConcurrency is %d; it must be between 1 and %d, or 0 (one per core)", n, pipeline.MaxSplitConcurrency)
	}
	return nil
}

// checkChunkFits refuses a chunk size that the embedding provider could
// never take in one input (embedder.Config.CheckChunkSize, defaults
// applied): every chunk longer than the cap would fail its document, which
// only the run would find out.
func (c *Config) checkChunkFits() error {
	size := c.Splitter.ChunkSize
	if size == 0 {
		size = splitter.DefaultChunkSize
	}
	return c.Embedder.CheckChunkSize(size)
}

func (c *Config) validateSink() error {
	switch c.Sink.Type {
	case sinkLocal:
		return c.Sink.Local.Validate()
	case sinkCloudSearch:
		cs := c.Sink.CloudSearch
		if err := cs.Validate(); err != nil {
			return err
		}
		if cs.EmbeddingDimensionality != c.Embedder.Dimensions {
			return fmt.Errorf("sink.cloudsearch.embeddingDimensionality is %d but embedder.dimensions is %d; set both to the embedding model's output size (1536 for text-embedding-3-small and ada-002)",
				cs.EmbeddingDimensionality, c.Embedder.Dimensions)
		}
		return nil
	}
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(c.Sink.Type)) {
	case "azureaisearch", "azuresearch", "aisearch", "azurecognitivesearch", "cognitivesearch", "azure":
		return fmt.Errorf("sink.type is %q; for Azure AI Search (the Cloud AI Search vector store) write cloudsearch", c.Sink.Type)
	}
	return fmt.Errorf("sink.type is %q; use local or cloudsearch", c.Sink.Type)
}

// configForDir loads the configuration of a command that reads a folder:
// DIR (if given) overrides source.dir, include (--include) replaces
// source.include and exclude (--exclude) adds to source.exclude; the folder
// must exist. An invalid pattern given as a flag is named as the flag.
// selectFlags says whether the command has --include and --exclude, for
// the advice of its errors.
func (a *app) configForDir(args, include, exclude []string, selectFlags bool) (Config, error) {
	cfg, err := a.config()
	if err != nil {
		return cfg, err
	}
	if len(args) == 1 {
		cfg.Source.Dir = args[0]
	}
	flags := flagSettings{}
	if len(include) > 0 {
		cfg.Source.Include = include
		for i, p := range include {
			flags.add(fmt.Sprintf("source.include[%d]", i), "--include", p, "source.include")
		}
	}
	for i, p := range exclude {
		flags.add(fmt.Sprintf("source.exclude[%d]", len(cfg.Source.Exclude)+i), "--exclude", p, "source.exclude")
	}
	cfg.Source.Exclude = append(cfg.Source.Exclude, exclude...)
	a.sourceFlags = flags
	if err := cfg.Source.Validate(); err != nil {
		return cfg, flags.explain(&ConfigError{Err: err})
	}
	if err := checkSourceDir(cfg.Source.Dir, selectFlags); err != nil {
		return cfg, err
	}
	cfg.Source.Own = ownFiles(cfg)
	return cfg, nil
}

// ownFiles returns the files Sluice writes while it reads the folder: the
// manifest and, for the local store, its database. The reader never takes
// them (or their SQLite and lock files) for documents, should they lie
// inside the folder (reader.Config.Own).
func ownFiles(cfg Config) []string {
	own := []string{cfg.State.Path}
	if isLocalSink(cfg) {
		own = append(own, cfg.Sink.Local.Path)
	}
	return own
}

// checkSourceDir says, as a usage error, why dir cannot be read as the
// folder of documents: it does not exist, it is a file (the way to read
// just that file is named: with --include if the command has that flag,
// includeFlag, else with source.include), or it cannot be opened.
func checkSourceDir(dir string, includeFlag bool) error {
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		if includeFlag {
			return usagef("source directory %q is a file, not a folder; to read just this file pass its folder %q as DIR with --include %q", dir, filepath.Dir(dir), globLiteral(filepath.Base(dir)))
		}
		return usagef("source directory %q is a file, not a folder; to read just this file pass its folder %q as DIR and set source.include to [%q] in the config file", dir, filepath.Dir(dir), globLiteral(filepath.Base(dir)))
	}
	if err == nil {
		var f *os.File
		if f, err = os.Open(dir); err == nil {
			return f.Close()
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return usagef("source directory %q does not exist; pass the folder to read as DIR or set source.dir", dir)
	}
	return usagef("source directory %q cannot be read (%v); check its permissions, or pass another folder as DIR or set source.dir", dir, unwrapPathError(err))
}

// globLiteral escapes the characters that a source.include pattern reads
// as a glob, so that the pattern matches the file name name alone.
func globLiteral(name string) string {
	var b strings.Builder
	for _, c := range name {
		if strings.ContainsRune(`\*?[]{}`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// isLocalSink reports whether cfg writes to the local store.
func isLocalSink(cfg Config) bool {
	return strings.EqualFold(strings.TrimSpace(cfg.Sink.Type), sinkLocal)
}
