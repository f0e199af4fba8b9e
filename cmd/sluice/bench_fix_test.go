package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline/bench"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/cloudsearch/searchtest"
	"github.com/sluice-dev/sluice/splitter"
)

// benchCorpus writes a small corpus under dir/corpus.
func benchCorpus(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{
		"a.md": strings.Repeat("Benchmarks measure throughput of embedding batches. ", 100),
		"b.md": strings.Repeat("Quotas limit tokens per minute and requests per minute. ", 100),
	})
}

// quickBench are flags that keep a benchmark short: a window ends once
// 100ms have passed and one request completed in it. --max-duration is
// generous so that a loaded machine (a trial process starved for a
// second under -race) makes the test slower, not failed.
var quickBench = []string{"--batch-sizes", "4", "--concurrency", "1", "--warmup", "0s", "--cooldown", "0s",
	"--duration", "100ms", "--max-duration", "1m", "--min-requests", "1", "--out", "results"}

// TestBenchUsageErrors checks that wrong flags are refused with exit 2
// before anything is measured, naming the flag: zero durations and counts
// that make no sense, batch sizes and concurrencies the embedder
// configuration refuses (for every provider), and an --out folder that
// cannot be written.
func TestBenchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{"afile": "not a folder", "taken/bench.svg/x": "a folder where the chart goes",
		"nokey.yaml": "embedder: {provider: openai, model: text-embedding-3-small, apiKeyEnv: SLUICE_TEST_UNSET_BENCH_KEY}\n"})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"duration 0", []string{"--duration", "0s"}, "--duration is 0s"},
		{"min requests 0", []string{"--min-requests", "0"}, "--min-requests is 0"},
		{"negative warm-up", []string{"--warmup", "-1s"}, "--warmup is -1s"},
		{"negative cool-down", []string{"--cooldown", "-1s"}, "--cooldown is -1s"},
		{"concurrency above the limit", []string{"--concurrency", "4,1000"}, "--concurrency: 1000 is tried as embedder.concurrency"},
		{"local batch above the limit", []string{"--batch-sizes", "8,10000"}, "--batch-sizes: 10000 is tried as embedder.batchSize"},
		{"batch above maxInputsPerRequest", []string{"--simulate", "--batch-sizes", "4096"}, "embedder.maxInputsPerRequest"},
		{"out under a file", []string{"--out", "afile/sub"}, "--out afile/sub cannot be created"},
		{"out holds a folder named bench.svg", []string{"--out", "taken"}, "--out taken holds a folder named bench.svg, where the results go"},
		{"unknown sink", []string{"--sink", "index"}, `--sink is "index"`},
		// Found once, not by every trial process in turn (exit 1 after all of them).
		{"missing API key", []string{"--config", "nokey.yaml"}, "environment variable SLUICE_TEST_UNSET_BENCH_KEY is not set"},
		// A --duration above the default --max-duration raises it: the
		// refusal is the next setting's, not --max-duration's.
		{"duration above the default max-duration", []string{"--duration", "40s", "--sink", "index"}, `--sink is "index"`},
		{"duration above a given max-duration", []string{"--duration", "40s", "--max-duration", "30s"}, "--max-duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := sluice(t, dir, append([]string{"bench", "corpus"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, tt.want)
			}
			if stdout != "" || strings.Contains(stderr, "configurations over") {
				t.Errorf("measured before refusing:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

// TestBenchOutUnwritable checks that an --out folder that exists but
// cannot be written is refused before measuring (exit 2).
//
// Root writes to read-only folders; as root (as in many CI containers) the
// folder is /proc/self instead, in which nobody can create a file.
func TestBenchOutUnwritable(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	ro := "ro"
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
			t.Skip("root writes to read-only folders, and there is no /proc/self")
		}
		ro = "/proc/self"
	} else if err := os.Mkdir(filepath.Join(dir, ro), 0o555); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := sluice(t, dir, "bench", "corpus", "--out", ro)
	if code != exitUsage || !strings.Contains(stderr, "--out "+ro+" cannot be written") || strings.Contains(stderr, "configurations over") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --out before measuring", code, stderr)
	}
}

// TestBenchAnnounce checks the start-up lines: the warm-up raised to a
// quota's burst window, with a note; the time of all configurations and of
// each (bench.Options.Predict, checked in its own test), with what makes
// them longer: --min-requests holding windows open past --duration, a
// quota that may throttle; and, when how fast the provider answers is
// unknown, "at least" and the most a configuration can take. Before, it
// said "about 3s each" where --min-requests at the quota's pace made each
// take 9 to 19s.
func TestBenchAnnounce(t *testing.T) {
	hash := embedder.DefaultConfig()
	// 600,000 tokens a minute, 10,000 a second: a request carries at most
	// 9,000 tokens, 8.5 chunks of 1,000 tokens.
	simOpts := bench.SimOptions{Latency: 100 * time.Millisecond, TPM: 600_000}
	sim := bench.SimulatedEmbedder(hash, "http://127.0.0.1:1/v1", simOpts)
	free := bench.SimOptions{Latency: 100 * time.Millisecond}
	opts := func(warmup, cooldown, duration, most time.Duration, minRequests int) bench.Options {
		return bench.Options{BatchSizes: []int{32}, Concurrencies: []int{1}, Warmup: warmup, Cooldown: cooldown, Duration: duration, MaxDuration: most, MinRequests: minRequests}
	}
	tests := []struct {
		name     string
		opts     bench.Options
		sink     string // "": discard
		w        bench.Workload
		want     []string
		dontWant []string
	}{
		// 0 + 0 + 0.1s (the first request) + 1s + 0.1s (a request every
		// 0.1s: half of it at each end of the window) + 25ms (the poll).
		{"zero warm-up and cool-down: none", opts(0, 0, time.Second, time.Second, 1), "",
			bench.Workload{Embedder: bench.SimulatedEmbedder(hash, "http://127.0.0.1:1/v1", free), TokensPerChunk: 1000, Latency: free.RequestLatency},
			[]string{"1 configuration over corpus, about 1.2s in all, 1.2s each\n"}, []string{"raised", "throttles", "windows", "at least"}},
		// 0.2s (start-up) + 1s (warm-up raised) + 0.1s + 0.425s (half the
		// time between requests, until one opens the window) + 10 requests
		// of 8,500 tokens at 10,000 tokens a second (8.5s) + 25ms.
		{"quota: --min-requests at the quota's pace", opts(time.Millisecond, 0, time.Second, time.Minute, 10), "",
			bench.Workload{Embedder: sim, TokensPerMinute: 600_000, TokensPerChunk: 1000, Latency: simOpts.RequestLatency, Startup: 200 * time.Millisecond},
			[]string{"warm-up raised from 1ms to 1s",
				"1 configuration over corpus, about 10.3s in all, 10.3s each (1 window stays open past --duration 1s until --min-requests 10 requests complete); more if the provider throttles\n"},
			[]string{"at least"}},
		{"no quota, speed unknown: at least, and the most", opts(2*time.Second, 10*time.Second, 5*time.Second, 30*time.Second, 20), "",
			bench.Workload{Embedder: hash, TokensPerChunk: 1000},
			[]string{"at least 7s in all, at least 7s each: each window stays open past --duration 5s until --min-requests 20 requests complete, which depends on how fast the embedder answers, up to --max-duration 30s (32s a configuration)\n"},
			[]string{"raised", "about", "throttles"}},
		{"--sink configured: the store's speed too", opts(2*time.Second, 10*time.Second, 5*time.Second, 30*time.Second, 20), benchSinkConfigured,
			bench.Workload{Embedder: hash, TokensPerChunk: 1000},
			[]string{"which depends on how fast the embedder answers and the store writes, up to"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &app{stderr: &stderr}
			f := &benchFlags{opts: tt.opts, sink: cmp.Or(tt.sink, benchSinkDiscard)}
			if err := f.validate(); err != nil {
				t.Fatal(err)
			}
			a.benchAnnounce(f.opts.Trials(), "corpus", tt.w, f)
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("%q lacks %q", stderr.String(), w)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(stderr.String(), w) {
					t.Errorf("%q has %q", stderr.String(), w)
				}
			}
		})
	}
}

// TestBenchWorkload checks what the parent learns for its prediction: the
// mean tokens of the corpus's chunks (from a dry run over it, compared
// here with the splitter run on each file); with --simulate the simulated
// latency, none otherwise (nor with --sink configured, whose store's speed
// is unknown); a start-up per trial only for a process per trial.
func TestBenchWorkload(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	tests := []struct {
		name      string
		f         benchFlags
		latency   bool
		startedUp bool
	}{
		{"simulated, a process per trial", benchFlags{simulate: true, sim: bench.SimOptions{Latency: time.Second}}, true, true},
		{"simulated, in process", benchFlags{simulate: true, inProcess: true, sim: bench.SimOptions{Latency: time.Second}}, true, false},
		// The store's speed is unknown: no latency, a lower bound.
		{"simulated, --sink configured", benchFlags{simulate: true, sink: benchSinkConfigured, sim: bench.SimOptions{Latency: time.Second}}, false, true},
		{"configured embedder", benchFlags{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{stderr: io.Discard}
			cfg := DefaultConfig()
			cfg.Source.Dir = filepath.Join(dir, "corpus")
			if tt.f.sink == "" {
				tt.f.sink = benchSinkDiscard
			}
			files, err := listBenchCorpus(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			emb, tpm := benchEmbedder(cfg, &tt.f)
			w, err := a.benchWorkload(t.Context(), cfg, files, emb, tpm, &tt.f, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if want := meanChunkTokens(t, cfg, files); w.TokensPerChunk != want {
				t.Errorf("TokensPerChunk = %v, want the corpus's, %v", w.TokensPerChunk, want)
			}
			if got := w.Latency != nil; got != tt.latency {
				t.Errorf("Latency set: %t, want %t", got, tt.latency)
			} else if tt.latency && w.Latency(0) != time.Second {
				t.Errorf("Latency(0) = %s, want --sim-latency, 1s", w.Latency(0))
			}
			want := time.Duration(0)
			if tt.startedUp {
				want = trialProcessStart + time.Second
			}
			if w.Startup != want {
				t.Errorf("Startup = %s, want %s", w.Startup, want)
			}
		})
	}
}

// meanChunkTokens splits each of files with cfg's splitter and returns the
// mean tokens of their chunks.
func meanChunkTokens(t *testing.T, cfg Config, files []reader.File) float64 {
	t.Helper()
	split, err := splitter.New(cfg.Splitter)
	if err != nil {
		t.Fatal(err)
	}
	var tokens, chunks int
	for _, f := range files {
		text, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range split.Split(string(text)) {
			tokens += c.Tokens
			chunks++
		}
	}
	if chunks == 0 {
		t.Fatal("the corpus has no chunk")
	}
	return float64(tokens) / float64(chunks)
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// TestBenchNeverTouchesTheLocalIndex checks that bench never writes to the
// configured local store: by default (no --simulate) the nodes are
// discarded, and --sink configured writes to a scratch store in a
// temporary folder made by the parent (passed to each trial's process with
// --scratch-path), removed at the end. The configured index.db is not
// created, or, when it exists, left byte for byte as it was; `sluice get`
// lists no benchmark node.
func TestBenchNeverTouchesTheLocalIndex(t *testing.T) {
	t.Setenv(cliChildEnv, "1") // trial processes are this test binary acting as sluice
	tests := []struct {
		name    string
		args    []string
		scratch bool
	}{
		{"default sink, a process per trial", nil, false},
		{"configured sink, a process per trial", []string{"--sink", "configured"}, true},
		{"configured sink, in process", []string{"--sink", "configured", "--in-process"}, true},
	}
	for _, tt := range tests {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/index exists %v", tt.name, existing), func(t *testing.T) {
				dir := t.TempDir()
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				benchCorpus(t, dir)
				index := filepath.Join(dir, ".sluice", "index.db")
				var before [32]byte
				if existing {
					writeFiles(t, dir, map[string]string{"real/one.md": "The one real document of the index."})
					if _, stderr, code := sluice(t, dir, "run", "real"); code != 0 {
						t.Fatalf("run: exit %d\n%s", code, stderr)
					}
					before = fileSum(t, index)
				}
				args := append(append([]string{"bench", "corpus", "--json"}, quickBench...), tt.args...)
				stdout, stderr, code := sluice(t, dir, args...)
				if code != 0 {
					t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
				}
				if got := len(jsonLines(t, stdout)); got != 1 {
					t.Errorf("%d result lines, want 1", got)
				}
				if !existing {
					if _, err := os.Stat(index); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("bench created the configured index %s (%v)", index, err)
					}
				} else {
					if fileSum(t, index) != before {
						t.Error("bench changed the configured index.db")
					}
					out, _, code := sluice(t, dir, "get", "--json")
					if lines := jsonLines(t, out); code != 0 || len(lines) != 1 || lines[0]["doc_id"] != "one.md" {
						t.Errorf("get after bench: exit %d, %d nodes %v; want only the real document's", code, len(lines), lines)
					}
				}
				used := strings.Contains(stderr, "bench: writing to the scratch local store "+tmp)
				if used != tt.scratch {
					t.Errorf("scratch store announced %v, want %v:\n%s", used, tt.scratch, stderr)
				}
				if left, _ := filepath.Glob(filepath.Join(tmp, "sluice-bench-*")); len(left) > 0 {
					t.Errorf("the scratch store was left behind: %v", left)
				}
			})
		}
	}
}

// TestBenchTrialNeedsScratchPath checks that a trial process told to write
// to the configured sink without the parent's scratch store refuses,
// instead of opening the configured index.
func TestBenchTrialNeedsScratchPath(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	_, stderr, code := sluice(t, dir, append([]string{"bench", "corpus", "--trial", "4x1", "--sink", "configured"}, quickBench...)...)
	if code != exitUsage || !strings.Contains(stderr, "--scratch-path") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --scratch-path", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "index.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the trial created the configured index (%v)", err)
	}
}

// TestBenchScratchCloudIndex checks --sink configured with Cloud AI Search
// against the strict test server: the benchmark creates the index
// <indexName>-sluice-bench, writes there, and deletes it at the end; the
// configured index gets no request at all. An index of the scratch name
// already there is refused and kept. A name too long for the suffix is a
// usage error.
func TestBenchScratchCloudIndex(t *testing.T) {
	srv, endpoint := searchtest.Start(t, searchtest.Options{Key: "bench-key"})
	t.Setenv("CLOUD_AI_SEARCH_KEY", "bench-key")
	config := func(index string) string {
		return fmt.Sprintf(`
embedder: {dimensions: 32}
sink:
  type: cloudsearch
  cloudsearch: {endpoint: %s, indexName: %s, embeddingDimensionality: 32}
`, endpoint, index)
	}
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{"sluice.yaml": config("real")})
	if _, stderr, code := sluice(t, dir, "index", "create"); code != 0 {
		t.Fatalf("index create: exit %d\n%s", code, stderr)
	}
	seen := len(srv.Requests())

	stdout, stderr, code := sluice(t, dir, append([]string{"bench", "corpus", "--sink", "configured", "--in-process"}, quickBench...)...)
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var created, wrote, deleted bool
	for _, r := range srv.Requests()[seen:] {
		scratch := strings.Contains(r.Path, "real-sluice-bench")
		switch {
		case scratch && strings.HasSuffix(r.Path, "/docs/index"):
			wrote = wrote || r.Status < 300
		case scratch && r.Method == "DELETE":
			deleted = deleted || r.Status < 300
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/indexes") && bytes.Contains(r.Body, []byte(`"real-sluice-bench"`)):
			created = created || r.Status < 300
		case !scratch && (strings.Contains(r.Path, "/indexes/real") || strings.Contains(r.Path, "'real'")):
			t.Errorf("bench sent %s %s to the configured index", r.Method, r.Path)
		}
	}
	if !created || !wrote || !deleted {
		t.Errorf("scratch index created %v, written %v, deleted %v; want all", created, wrote, deleted)
	}
	if _, ok := srv.Index("real-sluice-bench"); ok {
		t.Error("the scratch index is left behind")
	}
	if _, ok := srv.Index("real"); !ok || len(srv.Documents("real")) != 0 {
		t.Errorf("the configured index is gone or was written to: %d documents", len(srv.Documents("real")))
	}

	// An index of the scratch name already there is not the benchmark's
	// to delete: refused, left as it is.
	writeFiles(t, dir, map[string]string{"sluice.yaml": config("real-sluice-bench")})
	for _, args := range [][]string{{"index", "create"}, {"run", "corpus"}} {
		if _, stderr, code := sluice(t, dir, args...); code != 0 {
			t.Fatalf("%v into real-sluice-bench: exit %d\n%s", args, code, stderr)
		}
	}
	before := len(srv.Documents("real-sluice-bench"))
	writeFiles(t, dir, map[string]string{"sluice.yaml": config("real")})
	if _, stderr, code := sluice(t, dir, append([]string{"bench", "corpus", "--sink", "configured", "--in-process"}, quickBench...)...); code != exitUsage ||
		!strings.Contains(stderr, "the index real-sluice-bench already exists") {
		t.Errorf("bench with the scratch index already there: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
	if _, ok := srv.Index("real-sluice-bench"); !ok || before == 0 || len(srv.Documents("real-sluice-bench")) != before {
		t.Errorf("the existing real-sluice-bench index: present %v, %d documents, want its %d kept", ok, len(srv.Documents("real-sluice-bench")), before)
	}

	long := strings.Repeat("x", 120)
	writeFiles(t, dir, map[string]string{"sluice.yaml": config(long)})
	if _, stderr, code := sluice(t, dir, "bench", "corpus", "--sink", "configured"); code != exitUsage || !strings.Contains(stderr, "sink.cloudsearch.indexName") {
		t.Errorf("a %d-character indexName: exit %d, stderr %q; want exit 2 naming sink.cloudsearch.indexName", len(long), code, stderr)
	}
}

// TestBenchNothingEmbeddedFails checks that a folder whose files all fail
// (empty, not text) ends the benchmark with exit 1 and the reason, instead
// of hanging; and that, with no chart to draw, the bench.svg an earlier run
// left in --out is removed rather than left beside the new bench.csv as if
// it were this run's.
func TestBenchNothingEmbeddedFails(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{"a.md": "", "b.md": "\xff\xfe\x00\x01"})
	writeFiles(t, dir, map[string]string{"results/bench.svg": "<svg>an earlier run's chart</svg>"})
	args := append([]string{"bench", "corpus", "--in-process"}, quickBench...)
	args = append(args, "--warmup", "1h", "--duration", "1h", "--max-duration", "1h")
	_, stderr, code := sluice(t, dir, args...)
	if code != exitFatal || !strings.Contains(stderr, "no document could be embedded") || !strings.Contains(stderr, "corpus") {
		t.Errorf("exit %d, stderr %q; want exit 1 saying no document could be embedded", code, stderr)
	}
	if !strings.Contains(stderr, "in the error column of "+filepath.Join("results", "bench.csv")) {
		t.Errorf("stderr %q does not name the bench.csv holding the errors", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "bench.csv")); err != nil {
		t.Errorf("bench.csv not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "bench.svg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an earlier run's bench.svg is left beside this run's bench.csv (%v)", err)
	}
}

// TestBenchInProcessCorpusFirst checks that --in-process finds a folder
// with nothing to benchmark before it starts anything: exit 2, and no
// scratch store (or scratch Cloud AI Search index) is made for nothing.
func TestBenchInProcessCorpusFirst(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	writeFiles(t, filepath.Join(dir, "corpus"), map[string]string{"notes.txt": "not selected by source.include"})
	args := append([]string{"bench", "corpus", "--in-process", "--sink", "configured", "--simulate"}, quickBench...)
	_, stderr, code := sluice(t, dir, args...)
	if code != exitUsage || !strings.Contains(stderr, "no files to benchmark with") {
		t.Errorf("exit %d, stderr %q; want exit 2 saying there are no files", code, stderr)
	}
	if strings.Contains(stderr, "scratch") || strings.Contains(stderr, "simulated provider at") {
		t.Errorf("started the simulator or a scratch store before finding the corpus empty:\n%s", stderr)
	}
}

// TestBenchOutcome checks the exit status of a benchmark that measured
// something: 0 only when every configuration was measured; 1 when some or
// all failed, or when it was interrupted, saying so.
func TestBenchOutcome(t *testing.T) {
	ok, failed := bench.Result{BatchSize: 8, Concurrency: 1, TokensPerS: 10}, bench.Result{BatchSize: 16, Concurrency: 1, Error: "boom"}
	interrupted := errors.New("bench: interrupted while measuring 32x1, after 2 of 3 configurations: context canceled")
	tests := []struct {
		name    string
		results []bench.Result
		runErr  error
		want    string // "" for success
	}{
		{"all measured", []bench.Result{ok, ok}, nil, ""},
		{"some failed", []bench.Result{ok, failed, ok}, nil, "1 of 3 configurations failed"},
		{"all failed", []bench.Result{failed, failed}, nil, "every configuration failed"},
		{"interrupted", []bench.Result{ok, ok}, interrupted, "interrupted while measuring 32x1, after 2 of 3 configurations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := benchOutcome(tt.results, tt.runErr, "out")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("benchOutcome() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || exitCodeOf(err) != exitFatal):
				t.Errorf("benchOutcome() = %v (exit %d), want exit 1 saying %q", err, exitCodeOf(err), tt.want)
			}
		})
	}
}

// TestBenchSomeFailedExits1 runs a benchmark in which one configuration
// fails (its requests take the simulated provider 10 s, five times
// embedder.timeout, while the other's take 0.3 s) and checks that what was
// measured is printed and written, and that the exit status is 1 with
// "1 of 2 configurations failed".
func TestBenchSomeFailedExits1(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{"sluice.yaml": "splitter: {chunkSize: 64, chunkOverlap: 0}\nembedder: {timeout: 2s, maxRetries: -1}\n"})
	stdout, stderr, code := sluice(t, dir, "bench", "corpus", "--in-process", "--simulate", "--sim-latency", "0s", "--sim-token-latency", "5ms",
		"--batch-sizes", "1,512", "--concurrency", "1", "--warmup", "0s", "--cooldown", "0s",
		"--duration", "500ms", "--max-duration", "500ms", "--min-requests", "1", "--out", "results")
	if code != exitFatal || !strings.Contains(stderr, "1 of 2 configurations failed") {
		t.Errorf("exit %d, stderr %q; want exit 1 saying 1 of 2 configurations failed", code, stderr)
	}
	if !strings.Contains(stdout, "recommended: batchSize 1, concurrency 1") {
		t.Errorf("the table lacks the measured configuration's recommendation:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "bench.csv")); err != nil {
		t.Errorf("bench.csv not written: %v", err)
	}
}

// TestBenchTrialsReadTheParentsEnvFile: the process of each trial reads the
// env file the parent was given with --env-file, not ./.env, which here
// would point it at another configuration (one that selects no file).
func TestBenchTrialsReadTheParentsEnvFile(t *testing.T) {
	t.Setenv(cliChildEnv, "1") // trial processes are this test binary acting as sluice
	unsetEnv(t, configEnv)
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{
		".env":       "SLUICE_CONFIG=other.yaml\n",
		"other.yaml": "source: {include: [\"**/*.none\"]}\n",
		"deploy.env": "# nothing to set\n",
	})
	args := append([]string{"bench", "corpus", "--json", "--env-file", "deploy.env"}, quickBench...)
	if stdout, stderr, code := sluice(t, dir, args...); code != exitOK {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestRemoveBenchResults: a benchmark interrupted before its first
// configuration completed has no results to write; those of an earlier
// run in --out are removed, not left to read as its own, and other files
// are kept.
func TestRemoveBenchResults(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{benchCSV: "old", benchSVG: "<svg/>", "notes.txt": "mine"})
	removed, err := removeBenchResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, benchCSV), filepath.Join(dir, benchSVG)}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for name, want := range map[string]bool{benchCSV: false, benchSVG: false, "notes.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	if removed, err := removeBenchResults(dir); err != nil || len(removed) != 0 {
		t.Errorf("with nothing to remove: %q, %v", removed, err)
	}
}

// TestListBenchCorpusErrors: a corpus with no file, or a folder that does
// not exist, is a usage error (exit 2); an interruption while listing is
// not (exit 1), and says so without ending in "context canceled".
func TestListBenchCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"corpus/a.md": "Alpha.\n", "empty/a.go": "package a\n"})
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		folder string
		code   int
		want   string
	}{
		{"no file", t.Context(), "empty", exitUsage, "no files to benchmark with"},
		{"no folder", t.Context(), "absent", exitUsage, "source.dir"},
		{"interrupted", cancelled, "corpus", exitFatal, "bench: interrupted while listing the corpus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Source.Dir = filepath.Join(dir, tt.folder)
			_, err := listBenchCorpus(tt.ctx, cfg)
			if err == nil || exitCodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) || strings.HasSuffix(err.Error(), "context canceled") {
				t.Errorf("listBenchCorpus() = %v (exit %d); want exit %d saying %q", err, exitCodeOf(err), tt.code, tt.want)
			}
		})
	}
}
