package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-dev/sluice/pipeline/watch"
)

// TestWatchSettings checks the watch settings `sluice watch` runs with,
// from the configuration file and the flags: 0s turns debounce and the
// grace period off (it is not taken for the default), the file raises
// maxDelay with debounce as --debounce does, and the values that cannot be
// meant are errors naming the setting (and the flag, for a flag).
func TestWatchSettings(t *testing.T) {
	def := watch.DefaultConfig()
	with := func(mod func(*watch.Config)) watch.Config { c := def; mod(&c); return c }
	tests := []struct {
		name  string
		yaml  string   // the file's watch section, indented; "" for no file
		flags []string // flags of sluice watch
		want  watch.Config
		err   []string // what the error must say; nil for none
	}{
		{name: "defaults", want: def},
		{name: "empty setting keeps the default", yaml: "  debounce:\n", want: def},

		{name: "file debounce 0s is off", yaml: "  debounce: 0s\n",
			want: with(func(c *watch.Config) { c.Debounce = watch.NoDebounce })},
		{name: "flag debounce 0s is off", flags: []string{"--debounce", "0s"},
			want: with(func(c *watch.Config) { c.Debounce = watch.NoDebounce })},
		{name: "flag debounce wins over the file's 0s", yaml: "  debounce: 0s\n", flags: []string{"--debounce", "1s"},
			want: with(func(c *watch.Config) { c.Debounce = time.Second })},
		{name: "flag debounce 0s wins over the file", yaml: "  debounce: 2s\n", flags: []string{"--debounce", "0s"},
			want: with(func(c *watch.Config) { c.Debounce = watch.NoDebounce })},
		{name: "file grace period 0s is off", yaml: "  gracePeriod: 0s\n",
			want: with(func(c *watch.Config) { c.GracePeriod = watch.NoGracePeriod })},
		{name: "flag grace period 0s is off", flags: []string{"--grace-period", "0s"},
			want: with(func(c *watch.Config) { c.GracePeriod = watch.NoGracePeriod })},
		{name: "flag grace period wins over the file's 0s", yaml: "  gracePeriod: 0s\n", flags: []string{"--grace-period", "3s"},
			want: with(func(c *watch.Config) { c.GracePeriod = 3 * time.Second })},
		{name: "max delay 0s without debouncing", yaml: "  debounce: 0s\n  maxDelay: 0s\n",
			want: with(func(c *watch.Config) { c.Debounce = watch.NoDebounce })},
		{name: "flag max delay 0s without debouncing", flags: []string{"--debounce", "0s", "--max-delay", "0s"},
			want: with(func(c *watch.Config) { c.Debounce = watch.NoDebounce })},

		{name: "file debounce above the default max delay raises it", yaml: "  debounce: 20s\n",
			want: with(func(c *watch.Config) { c.Debounce, c.MaxDelay = 20*time.Second, 20*time.Second })},
		{name: "flag debounce above the default max delay raises it", flags: []string{"--debounce", "20s"},
			want: with(func(c *watch.Config) { c.Debounce, c.MaxDelay = 20*time.Second, 20*time.Second })},
		{name: "file debounce below the default max delay keeps it", yaml: "  debounce: 2s\n",
			want: with(func(c *watch.Config) { c.Debounce = 2 * time.Second })},
		{name: "file debounce and a longer max delay", yaml: "  debounce: 20s\n  maxDelay: 30s\n",
			want: with(func(c *watch.Config) { c.Debounce, c.MaxDelay = 20*time.Second, 30*time.Second })},
		{name: "flag max delay with the file's debounce", yaml: "  debounce: 20s\n", flags: []string{"--max-delay", "25s"},
			want: with(func(c *watch.Config) { c.Debounce, c.MaxDelay = 20*time.Second, 25*time.Second })},

		{name: "file max delay below debounce", yaml: "  debounce: 20s\n  maxDelay: 15s\n",
			err: []string{"watch.maxDelay is 15s", "at least watch.debounce (20s)"}},
		{name: "flag max delay below the file's debounce", yaml: "  debounce: 20s\n", flags: []string{"--max-delay", "15s"},
			err: []string{"watch.maxDelay is 15s", "at least watch.debounce (20s)", "(--max-delay)"}},
		{name: "file max delay 0s", yaml: "  maxDelay: 0s\n",
			err: []string{"watch.maxDelay is 0s", "at least watch.debounce (500ms)"}},
		{name: "flag max delay 0s", flags: []string{"--max-delay", "0s"},
			err: []string{"watch.maxDelay is 0s", "at least watch.debounce (500ms)", "(--max-delay)"}},
		// The refusal's suggestion must be a value the file takes: a
		// bare 0 is refused as a number without a unit.
		{name: "file rescan interval below 1s", yaml: "  rescanInterval: 500ms\n",
			err: []string{"watch.rescanInterval is 500ms", "use at least 1s, or 0s for off"}},
		{name: "file rescan interval 0s is off", yaml: "  rescanInterval: 0s\n", want: def},
		{name: "file rescan interval bare 0 is refused", yaml: "  rescanInterval: 0\n",
			err: []string{"watch.rescanInterval is 0, which is not a duration", "write 0s"}},
		{name: "file negative debounce", yaml: "  debounce: -1s\n",
			err: []string{"line 2: watch.debounce is -1s, which is negative; use 0s to ingest each change as soon as it is seen"}},
		{name: "file negative grace period", yaml: "  gracePeriod: -5s\n",
			err: []string{"line 2: watch.gracePeriod is -5s, which is negative; use 0s to abandon the documents in flight at once"}},
		{name: "flag negative debounce", flags: []string{"--debounce", "-1s"},
			err: []string{"--debounce is -1s, which is negative; use 0s", "(watch.debounce)"}},
		{name: "flag negative grace period", flags: []string{"--grace-period", "-1s"},
			err: []string{"--grace-period is -1s, which is negative; use 0s", "(watch.gracePeriod)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.yaml != "" {
				path = filepath.Join(t.TempDir(), "sluice.yaml")
				writeFiles(t, filepath.Dir(path), map[string]string{"sluice.yaml": "watch:\n" + tt.yaml})
			}
			got, err := watchSettings(t, path, tt.flags)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if got != tt.want {
					t.Errorf("settings\n %+v\nwant\n %+v", got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("settings %+v, want an error saying %q", got, tt.err)
			}
			for _, want := range tt.err {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// watchSettings returns the watch settings `sluice watch` would run with,
// given the configuration file path ("" for none) and its flags.
func watchSettings(t *testing.T, path string, args []string) (watch.Config, error) {
	t.Helper()
	cfg := DefaultConfig()
	if path != "" {
		var err error
		if cfg, _, err = loadConfig(path); err != nil {
			return watch.Config{}, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return watch.Config{}, err
	}
	fl := pflag.NewFlagSet("watch", pflag.ContinueOnError)
	var f watchFlags
	addWatchFlags(fl, &f, watch.DefaultConfig())
	if err := fl.Parse(args); err != nil {
		t.Fatal(err)
	}
	return watchConfig(fl, cfg.Watch, f)
}

// TestWatchSettingErrorsExit2 checks that watch settings that cannot be
// meant, in the file or as flags, stop `sluice watch` before it starts
// with the usage exit code.
func TestWatchSettingErrorsExit2(t *testing.T) {
	tests := []struct {
		name, yaml string
		flags      []string
		want       string
	}{
		{"file max delay below debounce", "watch: {debounce: 20s, maxDelay: 15s}\n", nil, "watch.maxDelay is 15s; it must be at least watch.debounce (20s)"},
		{"file negative grace period", "watch: {gracePeriod: -1s}\n", nil, "watch.gracePeriod is -1s, which is negative"},
		{"flag max delay 0s", "", []string{"--max-delay", "0s"}, "(--max-delay)"},
		{"flag negative grace period", "", []string{"--grace-period", "-1s"}, "(watch.gracePeriod)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha.", "sluice.yaml": tt.yaml})
			_, stderr, code := sluice(t, dir, append([]string{"watch", "docs"}, tt.flags...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d; stderr does not say %q?\n%s", code, exitUsage, tt.want, stderr)
			}
		})
	}
}
