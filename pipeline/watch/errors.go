package watch

import (
	"errors"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
)

var (
	// ErrAborted is returned by Run when Abort stopped the Loop without
	// waiting for the round in flight. The manifest is consistent; the next
	// start finishes the abandoned documents.
	ErrAborted = errors.New("watch: aborted; in-flight documents were abandoned, the next start resumes them")
	// ErrConfig marks an invalid watch setting; see ConfigError.
	ErrConfig = errors.New("watch: invalid configuration")
	// ErrRunning is returned by Run when the Loop was closed or already run.
	ErrRunning = errors.New("watch: loop closed or already running; create a new Loop")
)

// ConfigError names a watch setting that is wrong and says how to fix it.
type ConfigError struct {
	// Setting is the key in the configuration file, such as "watch.debounce".
	Setting string
	// Reason says what is wrong and what to use instead.
	Reason string
}

// Error returns "watch: <setting> <reason>".
func (e *ConfigError) Error() string { return "watch: " + e.Setting + " " + e.Reason }

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// permanent reports whether a round's error will recur however often the
// round is retried: a configuration, credential or model problem that needs
// a person, a state file that cannot be opened or is damaged, or a source
// folder that is gone or cannot be listed. Other errors (a store or network
// hiccup, a full disk under the store or the manifest) are retried with
// backoff.
func permanent(err error) bool {
	for _, target := range []error{
		state.ErrModelChanged, state.ErrAccess, state.ErrDamaged, reader.ErrConfig, pipeline.ErrConfig,
		embedder.ErrConfig, embedder.ErrMissingKey, embedder.ErrUnauthorized, embedder.ErrQuotaExhausted, embedder.ErrNotFound, embedder.ErrDimensions,
		sink.ErrDimensionMismatch, sink.ErrUnsupported,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
