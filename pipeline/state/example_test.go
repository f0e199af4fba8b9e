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

// A command that only reads the manifest, run by a user who may read the
// state file but not write it, opens it with OpenReadOnly: it takes no
// lock, so it also reads while a writer holds the index, and its writes
// fail with ErrReadOnly.
func ExampleOpenReadOnly() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "state-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.db")
	index := state.LocalScope(filepath.Join(dir, "index.db"))

	writer, err := state.OpenForWriting(ctx, path, index)
	if err != nil {
		log.Fatal(err)
	}
	defer writer.Close()

	reader, err := state.OpenReadOnly(ctx, path, index)
	if err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	ids, err := reader.DocIDs(ctx)
	fmt.Println("documents:", len(ids), err)
	_, err = reader.Begin(ctx)
	fmt.Println("write refused:", errors.Is(err, state.ErrReadOnly))
	// Output:
	// documents: 0 <nil>
	// write refused: true
}
