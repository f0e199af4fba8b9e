package state_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sluice-dev/sluice/pipeline/state"
)

// A writer opens the manifest with OpenForWriting, which takes the index's
// write lock at once: a second writer of the same index, here through
// another state file, is refused before it does any work.
func ExampleOpenForWriting() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "state-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	index := state.LocalScope(filepath.Join(dir, "index.db"))

	first, err := state.OpenForWriting(ctx, filepath.Join(dir, "state.db"), index)
	if err != nil {
		log.Fatal(err)
	}
	_, err = state.OpenForWriting(ctx, filepath.Join(dir, "other-state.db"), index)
	fmt.Println("second writer locked out:", errors.Is(err, state.ErrLocked))

	if err := first.Close(); err != nil {
		log.Fatal(err)
	}
	second, err := state.OpenForWriting(ctx, filepath.Join(dir, "other-state.db"), index)
	fmt.Println("after Close:", err)
	second.Close()
	// Output:
	// second writer locked out: true
	// after Close: <nil>
}
