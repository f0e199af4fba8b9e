package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/splitter"
)

// flagSettings records the settings that a command's flags override, by
// the name Validate gives them (source.include[0]), so that an invalid
// value is reported as the flag the user typed (--include '[abc') rather
// than as a setting of a file the user may not have.
type flagSettings map[string]flagSetting

// flagSetting is one flag's value and the setting it overrides.
type flagSetting struct {
	Flag    string // as typed, such as --include
	Value   string
	Setting string // the setting in the file, such as source.include
}

// add records that flag with value sets the setting Validate calls name
// (setting in the file).
func (fs flagSettings) add(name, flag, value, setting string) {
	fs[name] = flagSetting{Flag: flag, Value: value, Setting: setting}
}

// explain returns err, a validation error, as a usage error naming the flag
// when the invalid setting came from one; other errors are returned as they
// are. It knows the source (reader) and splitter settings.
func (fs flagSettings) explain(err error) error {
	var (
		rerr         *reader.ConfigError
		serr         *splitter.ConfigError
		name, reason string
	)
	switch {
	case errors.As(err, &rerr):
		name, reason = rerr.Setting, rerr.Reason
		if rerr.Cause != nil {
			reason += " (" + rerr.Cause.Error() + ")"
		}
	case errors.As(err, &serr):
		name, reason = serr.Field, serr.Reason
	default:
		return err
	}
	f, ok := fs[name]
	if !ok {
		return err
	}
	return &usageError{&flagError{flagSetting: f, Reason: reason, Err: err}}
}

// flagError is an invalid flag value; it wraps the validation error of the
// setting the flag overrides.
type flagError struct {
	flagSetting
	Reason string // what is wrong and how to fix it
	Err    error
}

func (e *flagError) Error() string {
	return fmt.Sprintf("%s %s: %s (%s)", e.Flag, shellQuote(e.Value), e.Reason, e.Setting)
}

func (e *flagError) Unwrap() error { return e.Err }

// shellQuote quotes s for a POSIX shell when it needs quoting, so that a
// flag value reads as it would be typed.
func shellQuote(s string) string {
	safe := s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == ""
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
