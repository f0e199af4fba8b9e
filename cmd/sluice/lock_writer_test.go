package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockHolder is a `sluice watch` running as a separate process (this test
// binary re-executed as the CLI), which holds the index's write lock.
type lockHolder struct {
	cmd     *exec.Cmd
	drained chan struct{} // closed when its stderr is read to the end
	mu      sync.Mutex
	stderr  strings.Builder
}

// startWatch starts `sluice watch docs` in dir and returns once it has
// opened the manifest for writing, as its log line before it starts
// watching tells.
func startWatch(t *testing.T, dir string) *lockHolder {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	h := &lockHolder{cmd: exec.CommandContext(ctx, exe, "watch", "docs"), drained: make(chan struct{})}
	h.cmd.Dir = dir
	h.cmd.Env = append(os.Environ(), cliChildEnv+"=1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stderr = w
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds its own copy: EOF once it exits
	ready := make(chan struct{})
	go func() {
		defer close(h.drained)
		defer r.Close()
		notify := ready
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			h.mu.Lock()
			h.stderr.WriteString(sc.Text() + "\n")
			h.mu.Unlock()
			if notify != nil && strings.Contains(sc.Text(), "reconciling, then watching") {
				close(notify)
				notify = nil
			}
		}
	}()
	t.Cleanup(func() { h.kill(t) })
	select {
	case <-ready:
	case <-h.drained:
		h.cmd.Wait()
		t.Fatalf("sluice watch exited before watching:\n%s", h.log())
	}
	return h
}

func (h *lockHolder) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

// kill kills the holder with SIGKILL, leaving it no chance to clean up, and
// waits for it; calling it twice is harmless.
func (h *lockHolder) kill(t *testing.T) {
	t.Helper()
	if h.cmd.ProcessState != nil {
		return
	}
	h.cmd.Process.Kill()
	<-h.drained
	h.cmd.Wait() // an error: it was killed
	if strings.Contains(h.log(), "DATA RACE") {
		t.Errorf("sluice watch reported a data race:\n%s", h.log())
	}
}

// TestSecondWriterRefused: while `sluice watch` writes an index, every
// other command that would write it through the manifest exits 1 at once,
// saying which process holds it and what to do, and changes nothing; the
// commands that only read keep working. Once the watch is killed (kill -9),
// a run proceeds: no stale lock is left behind.
func TestSecondWriterRefused(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"docs/a.md": "Alpha document about pelicans.\n",
		"docs/b.md": "Bravo document about herons.\n",
		// The same index through another state file.
		"other.yaml": "state: {path: .sluice/other-state.db}\n",
	})
	if _, errOut, code := sluice(t, dir, "run", "docs"); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	holder := startWatch(t, dir)
	pid := strconv.Itoa(holder.cmd.Process.Pid)

	writers := []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "docs"}},
		{"run --full", []string{"run", "docs", "--full"}},
		{"watch", []string{"watch", "docs"}},
		{"failed retry", []string{"failed", "retry", "docs"}},
		{"delete", []string{"delete", "--doc-id", "a.md"}},
		{"index delete", []string{"index", "delete"}},
		{"run with another state file", []string{"run", "docs", "--config", "other.yaml"}},
		{"index delete with another state file", []string{"index", "delete", "--config", "other.yaml"}},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			out, errOut, code := sluice(t, dir, w.args...)
			if code != exitFatal {
				t.Fatalf("sluice %s while a watch writes: exit %d, want 1; stdout %q, stderr %q", w.name, code, out, errOut)
			}
			wants := []string{"another sluice process", "pid " + pid, "watch docs", "wait for that process to finish", "stop it"}
			if slices.Contains(w.args, "other.yaml") {
				wants = append(wants, "through the state file "+filepath.Join(dir, ".sluice", "state.db"))
			}
			for _, want := range wants {
				if !strings.Contains(errOut, want) {
					t.Errorf("message %q lacks %q", errOut, want)
				}
			}
		})
	}

	readers := []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"query", []string{"query", "pelicans"}, "a.md"},
		{"get", []string{"get", "--json"}, `"doc_id":"a.md"`},
		{"failed list", []string{"failed", "list"}, "no failed documents"},
		{"index stats", []string{"index", "stats"}, ""},
		{"run --dry-run", []string{"run", "docs", "--dry-run"}, ""},
		{"failed retry --dry-run", []string{"failed", "retry", "docs", "--dry-run"}, "no failed documents"},
	}
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			out, errOut, code := sluice(t, dir, r.args...)
			if code != exitOK || !strings.Contains(out, r.want) {
				t.Errorf("sluice %s while a watch writes: exit %d, stdout %q, stderr %q; want exit 0 and %q", r.name, code, out, errOut, r.want)
			}
		})
	}
	// The refused delete deleted nothing: a.md is still there.
	if out, _, _ := sluice(t, dir, "get", "--json"); strings.Count(out, `"doc_id":"a.md"`) != 1 {
		t.Errorf("after the refused delete, the store holds %q; want a.md's node", out)
	}

	holder.kill(t)
	out, errOut, code := sluice(t, dir, "run", "docs", "--json")
	if code != exitOK {
		t.Fatalf("run after the watch was killed: exit %d: %s", code, errOut)
	}
	if rep := jsonLines(t, out); len(rep) != 1 || rep[0]["files_unchanged"] != float64(2) {
		t.Errorf("run after the watch was killed: %v, want both documents unchanged", rep)
	}
	if _, errOut, code := sluice(t, dir, "delete", "--doc-id", "a.md"); code != exitOK {
		t.Errorf("delete after the watch was killed: exit %d: %s", code, errOut)
	}
}
