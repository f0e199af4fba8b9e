package reader_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sluice-dev/sluice/reader"
)

func Example() {
	root, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	for name, body := range map[string]string{
		"guide.md":       "# Guide\n",
		"notes/todo.txt": "buy milk\n",
		"notes/empty.md": "",
		"notes/blank.md": " \n\n", // only white space: as empty
		"logo.png":       "\x89PNG",
		".git/HEAD.md":   "hidden",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(body), 0o644)
	}

	cfg := reader.DefaultConfig() // include: ["**/*.md"]
	cfg.Dir = root
	cfg.Include = append(cfg.Include, "**/*.txt") // plain text too
	err = reader.Walk(context.Background(), cfg, func(f reader.File, err error) error {
		if err != nil {
			fmt.Println("skip:", err)
			return nil
		}
		c, err := reader.Open(f)
		if err != nil {
			fmt.Println("skip:", err)
			return nil
		}
		defer c.Close()
		text, err := io.ReadAll(c)
		if errors.Is(err, reader.ErrEmpty) {
			fmt.Println("skip:", err)
			return nil
		} else if err != nil {
			return err
		}
		fmt.Printf("%s (%s): %q sha256 %.12s…\n", f.ID, f.Metadata[reader.KeyFileType], text, c.Sum())
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// guide.md (text/markdown): "# Guide\n" sha256 bc553ffe57e5…
	// skip: reader: notes/blank.md: empty file: nothing to index (only white space, 3 bytes); write text into it, or delete or exclude it (source.exclude); its earlier chunks stay in the index until then
	// skip: reader: notes/empty.md: empty file: nothing to index; write text into it, or delete or exclude it (source.exclude); its earlier chunks stay in the index until then
	// notes/todo.txt (text/plain): "buy milk\n" sha256 409baa381eae…
}

func ExampleConfig_Match() {
	cfg := reader.Config{Include: []string{"*.md"}, Exclude: []string{"drafts"}}
	for _, p := range []string{"a.md", "docs/b.md", "docs/drafts/c.md", ".github/d.md", "e.txt"} {
		fmt.Println(p, cfg.Match(p))
	}
	// Output:
	// a.md true
	// docs/b.md true
	// docs/drafts/c.md false
	// .github/d.md false
	// e.txt false
}

// ExampleNewWatcher shows watch mode: create the watcher first, reconcile
// with a Walk, then apply events until the context ends.
func ExampleNewWatcher() {
	root, err := os.MkdirTemp("", "sluice-watch-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	cfg := reader.DefaultConfig()
	cfg.Dir = root
	w, err := reader.NewWatcher(cfg, reader.WatchOptions{Debounce: 50 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan reader.Event)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, events) }() // Run closes events when it returns

	// ... initial reconciliation with reader.Walk(ctx, cfg, ...) here; a
	// change made from now on arrives as an event ...
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("# Notes\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	for ev := range events {
		if ctx.Err() != nil {
			continue // stopping: Run closes events
		}
		switch ev.Op {
		case reader.Changed:
			f, err := reader.Stat(cfg, ev.ID)
			fmt.Println("re-ingest", f.ID, err)
			cancel() // a real watch runs until its context ends
		case reader.Removed:
			fmt.Println("delete", ev.ID)
		case reader.Rescan:
			fmt.Println("reconcile everything:", ev.Err)
		}
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		fmt.Println(err)
	}
	// Output:
	// re-ingest notes.md <nil>
}

// ExcludeFileMetadata leaves file metadata keys out of the documents'
// metadata: here the two that change with every write to a growing log,
// so that re-reading it does not rewrite the metadata of its chunks.
func ExampleConfig_excludeFileMetadata() {
	root, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	if err := os.WriteFile(filepath.Join(root, "app.md"), []byte("started\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	cfg := reader.DefaultConfig()
	cfg.Dir = root
	cfg.ExcludeFileMetadata = []string{reader.KeyFileSize, reader.KeyLastModifiedDate}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	err = reader.Walk(context.Background(), cfg, func(f reader.File, err error) error {
		if err != nil {
			return err
		}
		fmt.Println(f.ID, slices.Sorted(maps.Keys(f.Metadata)))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: app.md [creation_date file_name file_path file_type]
}

// A manifest kept inside the folder it reads is no document, nor are the
// files SQLite keeps beside it, whatever the include patterns select.
func ExampleConfig_own() {
	cfg := reader.Config{Dir: "notes", Include: []string{"**/*"}, Own: []string{"notes/index/state.db"}}
	for _, p := range []string{"todo.md", "index/state.db", "index/state.db-wal", "index/state.db.md"} {
		fmt.Println(p, cfg.Match(p))
	}
	// Output:
	// todo.md true
	// index/state.db false
	// index/state.db-wal false
	// index/state.db.md true
}
