//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBenchInterrupted runs `sluice bench` as a child process, sends it
// SIGINT while it measures its second configuration and checks that what was
// measured is printed and written marked partial, with a best so far and
// no recommendation, that the message names the configuration that was
// running, and that it exits 1, as an interrupted `sluice run` does.
//
// At 20 ms a token, the first configuration's requests (one chunk of at
// most 32 tokens) take under a second, and the second's first request (a
// batch of up to 2048 chunks: the corpus, some 1,800 tokens, or at least
// one of its two files) 16 s or more, so that the signal, sent as soon as
// the first result is printed, finds the second configuration running even
// on a slow machine.
func TestBenchInterrupted(t *testing.T) {
	dir := t.TempDir()
	benchCorpus(t, dir)
	writeFiles(t, dir, map[string]string{"sluice.yaml": "splitter: {chunkSize: 32, chunkOverlap: 0}\n"})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "bench", "corpus", "--simulate", "--sim-latency", "0s", "--sim-token-latency", "20ms",
		"--batch-sizes", "1,2048", "--concurrency", "1", "--warmup", "0s", "--cooldown", "0s",
		"--duration", "100ms", "--max-duration", "5s", "--min-requests", "1", "--out", "results")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cliChildEnv+"=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var (
		mu     sync.Mutex
		stderr strings.Builder
	)
	second := make(chan struct{}) // the first configuration is measured
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			mu.Lock()
			stderr.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.HasPrefix(sc.Text(), "bench: 1x1: ") {
				close(second)
			}
		}
	}()
	select {
	case <-second:
	case <-drained:
		cmd.Wait()
		t.Fatalf("bench ended before its second configuration:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-drained
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFatal {
		t.Errorf("exit %v, want 1 as for an interrupted run", err)
	}
	out, log := stdout.String(), stderr.String()
	for _, want := range []string{"interrupted after 1 of 2 configurations; best so far: batchSize 1, concurrency 1", "best so far\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "recommended:") || strings.Contains(out, "  *") {
		t.Errorf("the table of an interrupted benchmark recommends:\n%s", out)
	}
	if !strings.Contains(log, "interrupted while measuring 2048x1, after 1 of 2 configurations") {
		t.Errorf("stderr does not name the configuration interrupted:\n%s", log)
	}
	f, err := os.Open(filepath.Join(dir, "results", "bench.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1][len(rows[1])-1] != "true" || rows[0][len(rows[0])-1] != "partial" {
		t.Errorf("bench.csv = %v, want one row marked partial", rows)
	}
}
