package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// watchBuffer is a bytes.Buffer safe for the command's and the test's goroutines.
type watchBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *watchBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *watchBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchRun is a `sluice watch` the test runs on its own goroutine, in the
// working directory: runWatch starts it, and the test's cleanup cancels
// it and waits for it, unless exited already received its exit code.
type watchRun struct {
	stdout, stderr watchBuffer
	cancel         context.CancelFunc
	code           chan int
	received       bool
}

// runWatch runs `sluice watch args...` in process until the test ends.
func runWatch(t *testing.T, args ...string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchRun{cancel: cancel, code: make(chan int, 1)}
	go func() { w.code <- execute(ctx, append([]string{"watch"}, args...), &w.stdout, &w.stderr) }()
	t.Cleanup(func() {
		cancel() // do not leave the command running after a failure
		if !w.received {
			<-w.code
		}
	})
	return w
}

// exited returns the command's exit code once it exits, failing the test
// if that takes more than 15 seconds after what.
func (w *watchRun) exited(t *testing.T, what string) int {
	t.Helper()
	select {
	case c := <-w.code:
		w.received = true
		return c
	case <-time.After(15 * time.Second):
		t.Fatalf("sluice watch did not exit after %s", what)
		return 0
	}
}

// servingMetrics matches the log line of the metrics server, which gives
// the address it bound.
var servingMetrics = regexp.MustCompile(`msg="watch: serving metrics" url=http://(\S+)/metrics`)

// watchMetricsAddr returns the address the metrics server of a `sluice
// watch --metrics-addr 127.0.0.1:0` bound, read from its log (stderr): the
// system picks a free port, so no other process can take it first, as it
// could one picked by the test and closed again.
func watchMetricsAddr(t *testing.T, stderr *watchBuffer) string {
	t.Helper()
	var addr string
	watchPoll(t, "the log line giving the metrics address", func() bool {
		m := servingMetrics.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		t.Fatalf("the metrics server logged address %q, want the port it bound", addr)
	}
	return addr
}

// poll calls ok every 20ms until it holds or 15s have passed.
func watchPoll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func watchGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestWatchSIGTERM runs `sluice watch` with metrics, changes the folder,
// sends the process a real SIGTERM and checks the exit code and the store.
func TestWatchSIGTERM(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.md": "Alpha document about pelicans.\n"})
	t.Chdir(dir)
	w := runWatch(t, "docs", "--metrics-addr", "127.0.0.1:0", "--debounce", "40ms", "--grace-period", "5s")
	addr := watchMetricsAddr(t, &w.stderr)
	watchPoll(t, "/readyz", func() bool { c, _ := watchGet("http://" + addr + "/readyz"); return c == http.StatusOK })
	if c, _ := watchGet("http://" + addr + "/healthz"); c != http.StatusOK {
		t.Errorf("/healthz = %d", c)
	}
	// b.md appears by a rename, which is one file-system event. Written in
	// place it would be two (a create, then a write), which a loaded
	// machine may hand to the watcher further apart than the debounce:
	// two rounds then, and b.md processed twice.
	writeFiles(t, dir, map[string]string{"b.md.new": "Bravo document about herons.\n"})
	if err := os.Rename(filepath.Join(dir, "b.md.new"), filepath.Join(dir, "docs/b.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "docs/a.md")); err != nil {
		t.Fatal(err)
	}
	watchPoll(t, "the change to be ingested", func() bool {
		_, m := watchGet("http://" + addr + "/metrics")
		return strings.Contains(m, "\nsluice_documents_processed_total 2\n") && strings.Contains(m, "\nsluice_documents_removed_total 1\n")
	})
	sendSIGTERM(t)
	if c := w.exited(t, "SIGTERM"); c != exitOK {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", c, w.stderr.String())
	}
	// The stop message sums up the watch: the first reconciliation (a.md)
	// and the round that ingested b.md and removed a.md.
	if !regexp.MustCompile(`state is saved" rounds=\d+ rescans=1 documents_processed=2 documents_failed=0 documents_removed=1 chunks_processed=2 tokens_embedded=\d+`).MatchString(w.stderr.String()) {
		t.Errorf("stderr lacks the stop message with the totals:\n%s", w.stderr.String())
	}
	out, _, _ := sluice(t, dir, "get", "--json")
	var docs []string
	for _, m := range jsonLines(t, out) {
		docs = append(docs, m["doc_id"].(string))
	}
	if !slices.Equal(docs, []string{"b.md"}) {
		t.Errorf("documents in the store after watch: %q, want [b.md]", docs)
	}
}

func TestWatchUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative debounce", []string{"watch", ".", "--debounce", "-1s"}, "watch.debounce"},
		{"max delay below debounce", []string{"watch", ".", "--debounce", "2s", "--max-delay", "1s"}, "--max-delay"},
		{"rescan too often", []string{"watch", ".", "--rescan-interval", "1ms"}, "watch.rescanInterval"},
		{"missing folder", []string{"watch", "nope"}, `"nope" does not exist`},
		{"file for folder", []string{"watch", "a.md"}, `"a.md" is a file, not a folder; to read just this file pass its folder "." as DIR and set source.include to ["a.md"] in the config file`},
		{"bad metrics address", []string{"watch", ".", "--metrics-addr", "not-an-address"}, "--metrics-addr"},
		{"two folders", []string{"watch", "a", "b"}, "sluice watch takes at most 1 argument, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			if err := os.WriteFile("a.md", []byte("A file, not a folder.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if c := execute(ctx, tt.args, &stdout, &stderr); c != exitUsage {
				t.Errorf("exit code %d, want %d; stderr:\n%s", c, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr does not mention %q:\n%s", tt.want, stderr.String())
			}
		})
	}
}

// TestWatchStopsOnContext checks that a cancelled context (the first signal
// through main's signal.NotifyContext) is a graceful stop with exit 0.
func TestWatchStopsOnContext(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "Alpha."})
	t.Chdir(dir)
	w := runWatch(t, "--metrics-addr", "127.0.0.1:0")
	addr := watchMetricsAddr(t, &w.stderr)
	watchPoll(t, "/readyz", func() bool { c, _ := watchGet("http://" + addr + "/readyz"); return c == http.StatusOK })
	w.cancel()
	if c := w.exited(t, "its context was cancelled"); c != exitOK {
		t.Fatalf("exit code %d, want 0; stderr:\n%s", c, w.stderr.String())
	}
}

// TestServiceExamples checks that the Kubernetes example's config loads and
// validates, and that both service examples use only flags `watch` has.
func TestServiceExamples(t *testing.T) {
	data, err := os.ReadFile("../../configs/kubernetes-watch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var cfgText string
	var args []string
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Args []string `yaml:"args"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		switch doc.Kind {
		case "ConfigMap":
			cfgText = doc.Data["sluice.yaml"]
		case "Deployment":
			args = doc.Spec.Template.Spec.Containers[0].Args
		}
	}
	if cfgText == "" || len(args) == 0 {
		t.Fatal("configs/kubernetes-watch.yaml lacks the ConfigMap's sluice.yaml or the Deployment's args")
	}
	path := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := loadConfig(path)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Errorf("the Kubernetes example's sluice.yaml: %v", err)
	}

	unit, err := os.ReadFile("../../configs/sluice-watch.service")
	if err != nil {
		t.Fatal(err)
	}
	var exec string
	for line := range strings.Lines(strings.ReplaceAll(string(unit), "\\\n", " ")) {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = rest
		}
	}
	if !strings.Contains(exec, " watch ") {
		t.Fatalf("configs/sluice-watch.service: ExecStart does not run sluice watch: %q", exec)
	}
	for _, f := range strings.Fields(exec) {
		if strings.HasPrefix(f, "--") {
			args = append(args, f)
		}
	}
	cmd, _, err := (&app{}).rootCommand().Find([]string{"watch"})
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
			t.Errorf("the service examples use --%s, which `sluice watch` does not have", name)
		}
	}
}

// TestRelaySignals sends the process two real SIGTERMs: the first must
// stop gracefully, the second abort.
func TestRelaySignals(t *testing.T) {
	stopped, aborted := make(chan struct{}), make(chan struct{})
	release := relaySignals(func() { close(stopped) }, func() { close(aborted) })
	defer release()
	for _, want := range []chan struct{}{stopped, aborted} {
		sendSIGTERM(t)
		select {
		case <-want:
		case <-time.After(10 * time.Second):
			t.Fatal("the signal was not relayed")
		}
	}
	release()
	release() // harmless twice
}

// TestWatchWarnsWhenNothingMatches: watch on a folder whose files
// source.include leaves out all says so at start, naming the setting (watch
// has no --include); one file that matches is enough to say nothing.
func TestWatchWarnsWhenNothingMatches(t *testing.T) {
	for _, tt := range []struct {
		files map[string]string
		warn  bool
	}{
		{map[string]string{"notes/a.txt": "Plain text.", "notes/b.txt": "More."}, true},
		{map[string]string{"notes/a.txt": "Plain text.", "notes/deep/c.md": "Markdown."}, false},
		// The only file that matches is in a hidden folder the patterns name.
		{map[string]string{"notes/a.txt": "Plain text.", "notes/.drafts/c.md": "Markdown.",
			"sluice.yaml": "source: {include: [\".drafts/*.md\"]}\n"}, false},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, tt.files)
		t.Chdir(dir)
		w := runWatch(t, "notes")
		watchPoll(t, "the reconciling line", func() bool { return strings.Contains(w.stderr.String(), "watch: reconciling") })
		const warning = "no file of notes matches source.include [**/*.md], so nothing is read; it holds 2 files that the patterns leave out (a.txt, b.txt); select them with source.include"
		if got := strings.Contains(w.stderr.String(), "matches source.include"); got != tt.warn {
			t.Errorf("files %v: warned %v, want %v; stderr:\n%s", tt.files, got, tt.warn, w.stderr.String())
		}
		if got := strings.Contains(w.stderr.String(), warning); got != tt.warn {
			t.Errorf("files %v: warned %v, want %v; stderr:\n%s", tt.files, got, tt.warn, w.stderr.String())
		}
		w.cancel()
		if c := w.exited(t, "its context was cancelled"); c != exitOK {
			t.Fatalf("exit code %d; stderr:\n%s", c, w.stderr.String())
		}
	}
}
