package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/sourcegraph/conc/stream"
	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/splitter"
)

// splitLine is one line of `split --json`.
type splitLine struct {
	File   string `json:"file"`
	Index  int    `json:"index"`
	Text   string `json:"text"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Tokens int    `json:"tokens"`
}

// streamSplitAbove is the file size above which `split` streams a file in
// windows instead of reading it whole.
const streamSplitAbove = 8 << 20

func (a *app) splitCommand() *cobra.Command {
	var (
		size, overlap int
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "split FILE...",
		Short: "Run the sentence splitter alone and print the chunks",
		Long: "Split files into chunks exactly as `run` would, without embedding or storing them. Files are\n" +
			"split in parallel and printed in argument order. start and end are byte offsets into the file.",
		Args: positionalArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("chunk-size") {
				cfg.Splitter.ChunkSize = size
			}
			if cmd.Flags().Changed("chunk-overlap") {
				cfg.Splitter.ChunkOverlap = overlap
			}
			sp, err := splitter.New(cfg.Splitter)
			if err != nil {
				return &usageError{err}
			}
			out := bufio.NewWriterSize(a.stdout, 1<<16)
			failed := 0
			s := stream.New().WithMaxGoroutines(runtime.GOMAXPROCS(0))
			for _, path := range args {
				s.Go(func() stream.Callback {
					return a.splitOne(cmd, sp, path, asJSON, out, &failed)
				})
			}
			s.Wait()
			if err := out.Flush(); err != nil {
				return err
			}
			if failed > 0 {
				return errPartial
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&size, "chunk-size", splitter.DefaultConfig().ChunkSize, "chunk size in cl100k_base tokens (default from the config's splitter.chunkSize)")
	cmd.Flags().IntVar(&overlap, "chunk-overlap", splitter.DefaultConfig().ChunkOverlap, "overlap in tokens (default from the config's splitter.chunkOverlap)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per chunk")
	return cmd
}

// splitOne splits one file concurrently and returns the callback that
// prints it in order. Large files are split in the callback itself, as a
// stream, so that memory stays flat.
func (a *app) splitOne(cmd *cobra.Command, sp *splitter.Splitter, path string, asJSON bool, out io.Writer, failed *int) stream.Callback {
	fail := func(err error) stream.Callback {
		return func() {
			*failed++
			fmt.Fprintf(a.stderr, "sluice: %s: %v\n", path, err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	f := reader.File{ID: path, Path: path, Size: st.Size()}
	print := func(i int, c splitter.Chunk) error { return printChunk(out, asJSON, path, i, c) }
	if st.Size() > streamSplitAbove {
		return func() {
			content, err := reader.Open(f)
			if err != nil {
				fail(err)()
				return
			}
			defer content.Close()
			i := 0
			err = sp.SplitReader(cmd.Context(), content, func(c splitter.Chunk) error {
				i++
				return print(i-1, c)
			})
			if err != nil {
				fail(err)()
			}
		}
	}
	text, _, err := reader.ReadAll(f)
	if err != nil {
		return fail(err)
	}
	chunks := sp.Split(text)
	return func() {
		for i, c := range chunks {
			if err := print(i, c); err != nil {
				fail(err)()
				return
			}
		}
	}
}

func printChunk(w io.Writer, asJSON bool, file string, i int, c splitter.Chunk) error {
	if asJSON {
		return json.NewEncoder(w).Encode(splitLine{File: file, Index: i, Text: c.Text, Start: c.Start, End: c.End, Tokens: c.Tokens})
	}
	_, err := fmt.Fprintf(w, "── %s #%d  bytes %d–%d  %d tokens\n%s\n", file, i, c.Start, c.End, c.Tokens, c.Text)
	return err
}
