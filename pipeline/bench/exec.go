package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Exec measures each trial in a child process, so that each trial's peak
// RSS (which the kernel cannot reset) is its own. The usual child is the
// sluice binary itself re-executed with a hidden flag naming the trial,
// running Harness.Measure and WriteResult.
type Exec struct {
	// Command returns the child for t, e.g. with exec.CommandContext. The
	// child must print the trial's Result as a JSON line on stdout (the
	// last line is read) and exit 0; its stderr is kept for error messages
	// unless Command sets cmd.Stderr.
	Command func(ctx context.Context, t Trial) *exec.Cmd
}

// ErrChild marks the failures of Exec's child processes.
var ErrChild = errors.New("bench: trial process failed")

// stderrTail is how much of a failed child's stderr an error quotes.
const stderrTail = 2048

// Measure runs the child for t and reads its Result.
func (e Exec) Measure(ctx context.Context, t Trial) (Result, error) {
	cmd := e.Command(ctx, t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(string(tail(stderr.Bytes(), stderrTail)))
		if msg == "" {
			msg = "no message"
		}
		return Result{}, fmt.Errorf("%w: trial %s: %w: %s", ErrChild, t, err, msg)
	}
	line := lastLine(stdout.Bytes())
	var r Result
	if err := json.Unmarshal(line, &r); err != nil {
		return Result{}, fmt.Errorf("%w: trial %s printed %q, not a result: %w", ErrChild, t, tail(line, 200), err)
	}
	return r, nil
}

// WriteResult writes r as the single JSON line Exec reads from a child.
func WriteResult(w io.Writer, r Result) error { return json.NewEncoder(w).Encode(r) }

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
