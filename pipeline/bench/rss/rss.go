// Package rss reads the peak resident set size of the running process. It
// imports nothing beyond the standard library, so that small measuring
// programs (benchmarks/splitter/stream) can use it without growing.
package rss

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrUnavailable is returned by Peak where /proc/self/status is unavailable
// (systems other than Linux).
var ErrUnavailable = errors.New("rss: peak RSS is not available on this system")

// Peak returns the peak resident set size of this process in bytes: the
// VmHWM line of /proc/self/status. The kernel keeps it for the life of the
// process; it cannot be reset, so a figure per measurement needs a process
// per measurement (as bench.Exec runs each trial).
func Peak() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return parseVmHWM(data)
}

// parseVmHWM reads the "VmHWM:   123456 kB" line of a /proc status file.
func parseVmHWM(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		num, unit, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
		kb, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil || string(bytes.TrimSpace(unit)) != "kB" {
			return 0, fmt.Errorf("%w: unexpected VmHWM line %q", ErrUnavailable, sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("%w: no VmHWM line in /proc/self/status", ErrUnavailable)
}
