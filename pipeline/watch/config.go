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

// Settings that are off. A zero setting takes its default, so these are
// negative, as a negative net.Dialer.KeepAlive turns keep-alives off and a
// negative httputil.ReverseProxy.FlushInterval flushes after each write.
const (
	// NoDebounce, as Config.Debounce, processes each change as soon as it
	// is seen (the configuration file's `debounce: 0s`).
	NoDebounce = reader.NoDebounce
	// NoGracePeriod, as Config.GracePeriod, abandons the documents in
	// flight at once on a stop (the configuration file's `gracePeriod: 0s`).
	NoGracePeriod time.Duration = -1
)

// Config holds the watch settings: the `watch` section of the
// configuration file. Zero values take their defaults (WithDefaults);
// NoDebounce and NoGracePeriod (any negative value) turn Debounce and
// GracePeriod off. cmd/sluice reads 0s written in the file, or given as a
// flag, as off for these two.
type Config struct {
	// Debounce is how long a file must stay quiet before it is processed;
	// a burst of writes to one file gives one update. Default 500ms.
	// NoDebounce processes each change as soon as it is seen: changes
	// that arrive while a round runs are still coalesced into the next
	// one, but a file being written may be processed more than once. A
	// file removed is still processed only once it has stayed gone for
	// 100ms: an editor's save moves the file away before the new one takes
	// its place, which would otherwise remove the document and embed every
	// chunk of the new file again.
	Debounce time.Duration `yaml:"debounce"`
	// MaxDelay bounds how long a file that keeps changing is held back.
	// Default 10s, or Debounce if that is longer; it must be at least
	// Debounce. Without debouncing it does not matter.
	MaxDelay time.Duration `yaml:"maxDelay"`
	// RescanInterval, if positive, runs a full reconciliation this often as
	// a safety net against events a file system never delivers (network
	// shares). Default 0: off.
	RescanInterval time.Duration `yaml:"rescanInterval"`
	// GracePeriod is how long a stop waits for the documents in flight
	// before abandoning them. Default 10s. NoGracePeriod abandons them at
	// once; the next start processes them again.
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

// WithDefaults returns c with its zero settings replaced by their
// defaults. A MaxDelay left zero takes DefaultMaxDelay or Debounce,
// whichever is longer.
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
// ("watch.maxDelay", "watch.maxBatch", ...). Call WithDefaults first to
// accept zero settings.
func (c Config) Validate() error {
	switch {
	case c.MaxDelay < 0:
		return &ConfigError{Setting: "watch.maxDelay", Reason: "is " + c.MaxDelay.String() + "; it must not be negative: use a duration at least watch.debounce, or leave it out (default 10s, or watch.debounce if longer)"}
	case c.MaxDelay < c.Debounce:
		return &ConfigError{Setting: "watch.maxDelay", Reason: "is " + c.MaxDelay.String() + "; it must be at least watch.debounce (" + c.Debounce.String() + "): raise it, or leave it out to take 10s or watch.debounce, whichever is longer"}
	case c.RescanInterval < 0:
		return &ConfigError{Setting: "watch.rescanInterval", Reason: "is " + c.RescanInterval.String() + "; use 0 to turn the periodic rescan off, or a duration such as 1h"}
	case c.RescanInterval > 0 && c.RescanInterval < time.Second:
		return &ConfigError{Setting: "watch.rescanInterval", Reason: "is " + c.RescanInterval.String() + "; a full rescan that often would never rest: use at least 1s, or 0s for off"}
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
