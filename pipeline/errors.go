package pipeline

import (
	"errors"
	"strconv"
)

// ErrConfig marks Options that Run refuses; *ConfigError wraps it.
var ErrConfig = errors.New("pipeline: invalid options")

// ConfigError names an option that is wrong and says what is allowed.
type ConfigError struct {
	// Setting is the option, with the configuration key that sets it in
	// Sluice's configuration file, such as
	// "Options.SplitConcurrency (pipeline.splitConcurrency)".
	Setting string
	// Reason says what is wrong and what to use instead.
	Reason string
}

// Error returns "pipeline: <setting> <reason>".
func (e *ConfigError) Error() string { return "pipeline: " + e.Setting + " " + e.Reason }

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// checkRange returns a *ConfigError when v lies above most. Values of 0 or
// less mean the default and are not checked here.
func checkRange(setting string, v, most int, def string) error {
	if v <= most {
		return nil
	}
	return &ConfigError{Setting: setting, Reason: "is " + strconv.Itoa(v) + "; it must be between 1 and " + strconv.Itoa(most) + " (0 means the default, " + def + ")"}
}
