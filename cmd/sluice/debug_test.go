package main

import (
	"strings"
	"testing"
)

// TestDebugFlag: --debug, before or after the command's name, turns on the
// debug log lines on stderr (the documents split and the embedding calls
// of run, the query of query), and leaves stdout alone; without it there
// are none.
func TestDebugFlag(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  []string // parts of stderr; nil: no debug line at all
		query bool     // run first, without --debug, so there is a store to query
	}{
		{name: "run", args: []string{"run", "docs"}},
		{name: "run --debug", args: []string{"run", "docs", "--debug"},
			want: []string{`level=DEBUG msg="document split" doc=a.md`, `level=DEBUG msg="document split" doc=b.md`, `level=DEBUG msg="embedding batch" chunks=2`}},
		{name: "--debug run", args: []string{"--debug", "run", "docs", "--json"},
			want: []string{`level=DEBUG msg="document split" doc=a.md`, `level=DEBUG msg="embedding batch"`}},
		{name: "query", args: []string{"query", "pelicans", "--json", "--filter", `author=in:["Smith, J","Lee"]`}, query: true},
		{name: "query --debug", args: []string{"query", "pelicans", "--json", "--filter", `author=in:["Smith, J","Lee"]`, "--debug"}, query: true,
			want: []string{"level=DEBUG msg=query mode=vector top_k=5 filters=1"}},
		{name: "--debug query --mode sparse", args: []string{"--debug", "query", "pelicans", "--json", "--mode", "sparse"}, query: true,
			want: []string{"level=DEBUG msg=query mode=sparse top_k=5 filters=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"docs/a.md": "Alpha document about pelicans.\n",
				"docs/b.md": "Bravo document about herons.\n",
				"sluice.yaml": `source:
  metadata:
    - {match: "a.md", set: {author: "Smith, J"}}
embedder: {dimensions: 16}
`,
			})
			if tt.query {
				if _, stderr, code := sluice(t, dir, "run", "docs"); code != exitOK || strings.Contains(stderr, "level=DEBUG") {
					t.Fatalf("run: exit %d, stderr %q; want exit 0 and no debug line", code, stderr)
				}
			}
			stdout, stderr, code := sluice(t, dir, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.want == nil && strings.Contains(stderr, "level=DEBUG") {
				t.Errorf("debug lines without --debug:\n%s", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stdout, "level=") {
				t.Errorf("log lines on stdout:\n%s", stdout)
			}
			if tt.query || strings.Contains(strings.Join(tt.args, " "), "--json") {
				if lines := jsonLines(t, stdout); len(lines) == 0 {
					t.Errorf("no JSON on stdout: %q", stdout)
				}
			}
		})
	}
}

// TestBenchDebug: `bench --debug` shows each embedding request, whether the
// trial runs in a process of its own (its stderr is passed on) or in this
// one; without --debug there is none.
func TestBenchDebug(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{"child process", []string{"--debug"}, true},
		{"in process", []string{"--debug", "--in-process"}, true},
		{"no --debug", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"corpus/a.md": strings.Repeat("Quotas limit tokens per minute. ", 300)})
			args := append([]string{"bench", "corpus", "--simulate", "--batch-sizes", "4", "--concurrency", "1", "--sim-latency", "2ms",
				"--warmup", "0s", "--cooldown", "0s", "--duration", "50ms", "--min-requests", "2", "--out", "results"}, tt.args...)
			out, stderr, code := sluice(t, dir, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			if got := strings.Contains(stderr, `level=DEBUG msg="embedding request" provider=openai`); got != tt.want {
				t.Errorf("stderr shows embedding requests: %v, want %v\n%s", got, tt.want, stderr)
			}
		})
	}
}

// TestBenchChildErrorUnderDebugAndJSON: the error of a configuration whose
// trial process failed is the trial's own message, whether its stderr is
// passed on (--debug) or its log is JSON (--log-format json).
func TestBenchChildErrorUnderDebugAndJSON(t *testing.T) {
	for _, extra := range [][]string{{"--debug"}, {"--log-format", "json"}} {
		t.Run(extra[0], func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"corpus/a.md": strings.Repeat("Quotas limit tokens per minute. ", 150),
				"sluice.yaml": "embedder: {provider: openai, model: text-embedding-3-small, timeout: 400ms, maxRetries: -1}\n",
			})
			// One chunk answers in about 0.1 s, eight in about 0.8 s: 8x1 times out.
			args := append([]string{"bench", "corpus", "--simulate", "--json", "--batch-sizes", "1,8", "--concurrency", "1", "--sim-latency", "1ms",
				"--sim-token-latency", "100us", "--warmup", "0s", "--cooldown", "0s", "--duration", "100ms", "--min-requests", "2", "--out", "results"}, extra...)
			out, stderr, code := sluice(t, dir, args...)
			if code != exitFatal {
				t.Fatalf("exit %d, want 1 (a configuration failed)\n%s\n%s", code, out, stderr)
			}
			var errs []string
			for _, l := range jsonLines(t, out) {
				if e, ok := l["error"].(string); ok {
					errs = append(errs, e)
				}
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0], "bench: trial 8x1: embedder: ") || !strings.Contains(errs[0], "embedder.timeout") || strings.Contains(errs[0], `{"`) {
				t.Errorf("errors %q, want the trial's own message about embedder.timeout", errs)
			}
		})
	}
}
