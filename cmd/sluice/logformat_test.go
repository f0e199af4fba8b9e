package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogFormatJSON checks --log-format json: every line sluice writes to
// stderr, warnings and the fatal error included, is one JSON object with
// time, level and msg, for log collectors; an unknown format exits 2
// naming the flag.
func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"docs/a.txt": "Plain text.", "corpus/b.md": strings.Repeat("Quotas limit tokens per minute. ", 200)})
	tests := []struct {
		name  string
		args  []string
		code  int
		level string // of the last line
		msg   string // in the last line's msg
	}{
		{"warning", []string{"--log-format", "json", "run", "docs"}, exitOK, "WARN", "no file of docs matches source.include"},
		{"fatal error", []string{"--log-format=json", "query", "text", "--mode", "nonsense"}, exitUsage, "ERROR", "nonsense"},
		{"bad flag before --log-format", []string{"run", "docs", "--bogus", "--log-format", "json"}, exitUsage, "ERROR", "bogus"},
		{"bad value before --log-format=", []string{"bench", "corpus", "--batch-sizes", "x", "--log-format=json"}, exitUsage, "ERROR", `--batch-sizes: "x" is not a comma-separated list of whole numbers`},
		{"bench's progress", []string{"--log-format", "json", "bench", "corpus", "--simulate", "--in-process", "--batch-sizes", "4", "--concurrency", "1",
			"--sim-latency", "2ms", "--warmup", "0s", "--cooldown", "0s", "--duration", "50ms", "--min-requests", "2", "--out", "results"}, exitOK, "INFO", "bench: wrote "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := sluice(t, dir, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			var last map[string]any
			for _, line := range lines {
				last = nil
				if err := json.Unmarshal([]byte(line), &last); err != nil {
					t.Fatalf("stderr line is not JSON (%v): %s", err, line)
				}
				if last["time"] == nil || last["level"] == nil || last["msg"] == nil {
					t.Errorf("line lacks time, level or msg: %s", line)
				}
			}
			if msg, _ := last["msg"].(string); last["level"] != tt.level || !strings.Contains(msg, tt.msg) {
				t.Errorf("last line %v; want level %s and a msg with %q", last, tt.level, tt.msg)
			}
		})
	}
	_, stderr, code := sluice(t, dir, "--log-format", "xml", "run", "docs")
	if code != exitUsage || !strings.Contains(stderr, `--log-format "xml" is not a log format; use text or json`) {
		t.Errorf("--log-format xml: exit %d, stderr %q; want exit 2 naming the flag", code, stderr)
	}
}

// TestLogFormatJSONDurations checks that --log-format json writes
// durations as seconds, in groups too, and leaves other values as they are.
func TestLogFormatJSONDurations(t *testing.T) {
	var buf bytes.Buffer
	h, err := newLogHandler("json", &buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	slog.New(h).Debug("embedding batch", "took", 1500*time.Millisecond, "chunks", 8,
		slog.Group("http", slog.Duration("latency", 250*time.Microsecond)))
	var line struct {
		Level string  `json:"level"`
		Took  float64 `json:"took"`
		Chunk int     `json:"chunks"`
		HTTP  struct {
			Latency float64 `json:"latency"`
		} `json:"http"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if line.Level != "DEBUG" || line.Took != 1.5 || line.Chunk != 8 || line.HTTP.Latency != 0.00025 {
		t.Errorf("got %s; want level DEBUG (the options kept), took 1.5, chunks 8 and http.latency 0.00025", buf.Bytes())
	}
}
