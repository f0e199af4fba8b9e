package rss

import (
	"errors"
	"testing"
)

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		name   string
		status string
		want   int64
		ok     bool
	}{
		{"linux", "Name:\tsluice\nVmPeak:\t  900 kB\nVmHWM:\t   51200 kB\nVmRSS:\t 40000 kB\n", 51200 << 10, true},
		{"missing", "Name:\tsluice\nVmRSS:\t 40000 kB\n", 0, false},
		{"bad unit", "VmHWM:\t 12 MB\n", 0, false},
		{"bad number", "VmHWM:\t x kB\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVmHWM([]byte(tt.status))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("parseVmHWM = %d, %v; want %d, ok=%v", got, err, tt.want, tt.ok)
			}
			if !tt.ok && !errors.Is(err, ErrUnavailable) {
				t.Errorf("error %v does not wrap ErrUnavailable", err)
			}
		})
	}
}

func TestPeakOfThisProcess(t *testing.T) {
	n, err := Peak()
	if errors.Is(err, ErrUnavailable) {
		t.Skip("no /proc/self/status here")
	}
	if err != nil || n < 1<<20 {
		t.Fatalf("Peak() = %d, %v; want at least 1 MiB", n, err)
	}
}
