package main

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-dev/sluice/pipeline/watch"
)

// Hints for a watch duration written negative: what 0s means instead.
const (
	debounceOffHint = "use 0s to ingest each change as soon as it is seen, or a duration such as 500ms (the default)"
	graceOffHint    = "use 0s to abandon the documents in flight at once on a stop, or a duration such as 10s (the default)"
)

// settleWatch gives the watch settings a configuration file writes the
// meaning the flags of `sluice watch` give them. doc is the file and w the
// watch section decoded from it (over the defaults). Only the file tells
// which settings it writes: once decoded, a 0s it wrote would be taken
// for "unset" by watch.Config.WithDefaults, which replaces zero settings
// by their defaults. So:
//
//   - watch.debounce: 0s turns debouncing off (watch.NoDebounce): each
//     change is ingested as soon as it is seen;
//   - watch.gracePeriod: 0s turns the grace period off (watch.NoGracePeriod):
//     a stop abandons the documents in flight at once;
//   - watch.debounce written without watch.maxDelay raises maxDelay to it
//     if it is longer than the default 10s, as --debounce does without
//     --max-delay (a maxDelay written below debounce stays an error);
//   - a negative debounce or gracePeriod is refused (watch.Config would
//     take it for off), naming the setting, its line and what to write.
//
// watch.maxDelay: 0s is left to watch.Config.Validate, which refuses it
// unless debouncing is off too.
func settleWatch(doc *yaml.Node, w *watch.Config) error {
	set := map[string]*yaml.Node{}
	walkSettings(doc, func(s setting) {
		if s.node.Kind == yaml.ScalarNode && !isNull(s.node) {
			set[s.name] = s.node // a null keeps the default
		}
	})
	var errs settingErrors
	for _, d := range []struct {
		name string
		v    *time.Duration
		off  time.Duration
		hint string
	}{
		{"watch.debounce", &w.Debounce, watch.NoDebounce, debounceOffHint},
		{"watch.gracePeriod", &w.GracePeriod, watch.NoGracePeriod, graceOffHint},
	} {
		n, ok := set[d.name]
		switch {
		case !ok:
		case *d.v < 0:
			errs = append(errs, &settingError{Line: n.Line, Setting: d.name, Value: n.Value, Problem: "negative", Hint: d.hint})
		case *d.v == 0:
			*d.v = d.off
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if _, ok := set["watch.maxDelay"]; !ok && set["watch.debounce"] != nil {
		w.MaxDelay = max(watch.DefaultMaxDelay, w.Debounce)
	}
	return nil
}
