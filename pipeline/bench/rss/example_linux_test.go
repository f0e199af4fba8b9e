package rss_test

import (
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/pipeline/bench/rss"
)

// Peak reports the largest resident set this process has had so far, or
// ErrUnavailable on systems without /proc (this example runs on Linux).
func ExamplePeak() {
	peak, err := rss.Peak()
	switch {
	case errors.Is(err, rss.ErrUnavailable):
		fmt.Println("peak RSS not available here")
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println("peak RSS above 1 MiB:", peak > 1<<20)
	}
	// Output: peak RSS above 1 MiB: true
}
