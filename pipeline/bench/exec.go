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
	// last line is read) and exit 0. If it fails, its error is the last
	// line of its stderr: "Prog: message" (Prog: is left out) or a JSON
	// log line (its msg is taken); anything else is quoted as it is, up to
	// its last 2 KiB.
	Command func(ctx context.Context, t Trial) *exec.Cmd
	// Prog is the name a child's error line starts with ("sluice").
	Prog string
	// Stderr, if set, also gets the child's stderr as it comes: its log,
	// under --debug say.
	Stderr io.Writer
}

// ErrChild marks the failures of Exec's child processes.
var ErrChild = errors.New("bench: trial process failed")

// stderrTail is how much of a failed child's stderr is kept.
const stderrTail = 2048

// Measure runs the child for t and reads its Result.
func (e Exec) Measure(ctx context.Context, t Trial) (Result, error) {
	cmd := e.Command(ctx, t)
	var stdout bytes.Buffer
	stderr := &tailWriter{max: stderrTail}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if e.Stderr != nil {
		cmd.Stderr = io.MultiWriter(e.Stderr, stderr)
	}
	if err := cmd.Run(); err != nil {
		return Result{}, newChildError(t, err, e.Prog, stderr.buf)
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

// childError is the failure of a trial's child process: its own message,
// when its stderr ends with one, else what its stderr ends with.
type childError struct {
	trial Trial
	err   error  // from exec.Cmd.Run
	msg   string // the child's message
	own   bool   // msg is the child's message, not just its stderr's tail
}

// newChildError reads the message of the child prog, which failed with err,
// from the tail of its stderr (see Exec.Command).
func newChildError(t Trial, err error, prog string, stderr []byte) *childError {
	e := &childError{trial: t, err: err, msg: strings.TrimSpace(string(stderr))}
	line := string(lastLine(bytes.TrimSpace(stderr)))
	var logLine struct {
		Msg *string `json:"msg"`
	}
	switch {
	case prog != "" && strings.HasPrefix(line, prog+": "):
		e.msg, e.own = strings.TrimPrefix(line, prog+": "), true
	case strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &logLine) == nil && logLine.Msg != nil:
		e.msg, e.own = *logLine.Msg, true
	}
	return e
}

// Error is the child's message, with how its process ended.
func (e *childError) Error() string {
	switch {
	case e.own:
		return fmt.Sprintf("%s (trial process: %v)", e.msg, e.err)
	case e.msg == "":
		return fmt.Sprintf("%v: trial %s: %v: no message", ErrChild, e.trial, e.err)
	}
	return fmt.Sprintf("%v: trial %s: %v: %s", ErrChild, e.trial, e.err, e.msg)
}

// Is reports ErrChild.
func (e *childError) Is(target error) bool { return target == ErrChild }

// Unwrap returns how the process ended (an *exec.ExitError, say).
func (e *childError) Unwrap() error { return e.err }

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
