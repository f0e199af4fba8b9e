package watch_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/pipeline/watch"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink/local"
	"github.com/sluice-dev/sluice/splitter"
)

// Example keeps a local index in step with a folder: the initial
// reconciliation ingests the file already there, and a file saved later is
// ingested by an update round.
func Example() {
	ctx := context.Background()
	base, err := os.MkdirTemp("", "sluice-watch-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)
	docs := filepath.Join(base, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "intro.md"), []byte("Sluice keeps indexes in step with folders."), 0o644)

	store, err := local.Open(ctx, local.Config{Path: filepath.Join(base, "index.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	st, err := state.Open(ctx, filepath.Join(base, "state.db"), "example")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	split, err := splitter.New(splitter.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}

	rounds := make(chan watch.Round, 16)
	loop, err := watch.New(watch.Options{
		Pipeline: pipeline.Options{
			Reader:       reader.Config{Dir: docs},
			Splitter:     split,
			Embedder:     embedder.NewHash(64),
			Store:        store,
			State:        st,
			EmbedderInfo: state.Embedder{Provider: "hash", Dimensions: 64},
		},
		Config:  watch.Config{Debounce: 50 * time.Millisecond},
		OnRound: func(r watch.Round) { rounds <- r },
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()

	r := <-rounds
	fmt.Printf("%s round: %d added\n", r.Kind, r.Report.FilesAdded)

	os.WriteFile(filepath.Join(docs, "usage.md"), []byte("Run sluice watch DIR."), 0o644)
	r = <-rounds
	fmt.Printf("%s round: %v\n", r.Kind, r.Changed)

	stop() // as on SIGTERM: finish the round in flight, then return nil
	fmt.Println("stopped:", <-done)
	// Output:
	// initial round: 1 added
	// update round: [usage.md]
	// stopped: <nil>
}
