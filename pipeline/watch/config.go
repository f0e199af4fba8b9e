package watch

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice/reader"
)

// Defaults of Config.
const (
	DefaultDebounce    = reader.DefaultDebounce
	DefaultMaxDelay    = reader.DefaultMaxDelay
	DefaultGracePeriod = 10 * time.Second
	DefaultMaxBatch    = 1000
	DefaultMaxPending  = 10000
)

// Config holds the watch settings: the `watch` section of the
// configuration file. Zero values take their defaults (WithDefaults).
type Config struct {
	// Debounce is how long a file must stay quiet before it is processed;
	// a burst of writes to one file gives one update. Default 500ms.
	Debounce time.Duration `yaml:"debounce"`
	// MaxDelay bounds how long a file that keeps changing is held back.
	// Default 10s; it must be at least Debounce.
	MaxDelay time.Duration `yaml:"maxDelay"`
	// RescanInterval, if positive, runs a full reconciliation this often as
	// a safety net against events a file system never delivers (network
	// shares). Default 0: off.
	RescanInterval time.Duration `yaml:"rescanInterval"`
	// GracePeriod is how long a stop waits for the documents in flight
	// before abandoning them. Default 10s.
	GracePeriod time.Duration `yaml:"gracePeriod"`
	// MaxBatch is the most documents processed in one round. Default 1000.
	MaxBatch int `yaml:"maxBatch"`
	// MaxPending is the most document ids held while waiting for a round;
	// beyond it they are dropped for one full reconciliation, which keeps
	// memory flat during huge bursts. Default 10000.
	MaxPending int `yaml:"maxPending"`
}

// DefaultConfig returns the default watch settings.
func DefaultConfig() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with its zero settings replaced by their defaults.
func (c Config) WithDefaults() Config {
	w := c.watchOptions().WithDefaults() // the reader owns the debounce defaults
	c.Debounce, c.MaxDelay = w.Debounce, w.MaxDelay
	if c.GracePeriod == 0 {
		c.GracePeriod = DefaultGracePeriod
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	return c
}

// Validate reports the first invalid setting as a *ConfigError naming it
// ("watch.debounce", "watch.maxBatch", ...). Call WithDefaults first to
// accept zero settings.
func (c Config) Validate() error {
	switch {
	case c.Debounce < 0:
		return &ConfigError{Setting: "watch.debounce", Reason: "is " + c.Debounce.String() + "; it must not be negative (default 500ms)"}
	case c.MaxDelay < c.Debounce:
		return &ConfigError{Setting: "watch.maxDelay", Reason: "is " + c.MaxDelay.String() + "; it must be at least watch.debounce (" + c.Debounce.String() + ")"}
	case c.RescanInterval < 0:
		return &ConfigError{Setting: "watch.rescanInterval", Reason: "is " + c.RescanInterval.String() + "; use 0 to turn the periodic rescan off, or a duration such as 1h"}
	case c.RescanInterval > 0 && c.RescanInterval < time.Second:
		return &ConfigError{Setting: "watch.rescanInterval", Reason: "is " + c.RescanInterval.String() + "; a full rescan that often would never rest: use at least 1s, or 0 for off"}
	case c.GracePeriod < 0:
		return &ConfigError{Setting: "watch.gracePeriod", Reason: "is " + c.GracePeriod.String() + "; it must not be negative (default 10s)"}
	case c.MaxBatch < 1:
		return &ConfigError{Setting: "watch.maxBatch", Reason: fmt.Sprintf("is %d; it must be at least 1 (default 1000)", c.MaxBatch)}
	case c.MaxPending < c.MaxBatch:
		return &ConfigError{Setting: "watch.maxPending", Reason: fmt.Sprintf("is %d; it must be at least watch.maxBatch (%d; default 10000)", c.MaxPending, c.MaxBatch)}
	}
	return nil
}

// watchOptions returns the reader's settings. Folders the watch limit
// keeps from being watched are retried (with a full reconciliation) every
// minute, or every RescanInterval if that is shorter.
func (c Config) watchOptions() reader.WatchOptions {
	o := reader.WatchOptions{Debounce: c.Debounce, MaxDelay: c.MaxDelay}
	if c.RescanInterval > 0 {
		o.LimitRetry = min(c.RescanInterval, reader.DefaultLimitRetry)
	}
	return o
}
