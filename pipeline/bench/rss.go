package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrNoRSS is returned by PeakRSS where /proc/self/status is unavailable
// (systems other than Linux).
var ErrNoRSS = errors.New("bench: peak RSS is not available on this system")

// PeakRSS returns the peak resident set size of this process in bytes: the
// VmHWM line of /proc/self/status. The kernel keeps it for the life of the
// process; it cannot be reset, which is why Exec measures each trial in a
// process of its own.
func PeakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoRSS, err)
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
			return 0, fmt.Errorf("%w: unexpected VmHWM line %q", ErrNoRSS, sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("%w: no VmHWM line in /proc/self/status", ErrNoRSS)
}

func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }
