package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

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
	// StartChar and EndChar are the offsets in UTF-16 code units into the
	// text (the file without a leading byte-order mark), which run stores
	// as LlamaIndex's start_char_idx and end_char_idx.
	StartChar int `json:"start_char_idx"`
	EndChar   int `json:"end_char_idx"`
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
			"split in parallel and printed in argument order. start and end are byte offsets into the file;\n" +
			"start_char_idx and end_char_idx (--json) are what run stores: UTF-16 code units, as LlamaIndex counts.",
		Args: minArgs(1),
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
				// Name the flags given, with their values: the error
				// names the setting each one stands for.
				var given []string
				if cmd.Flags().Changed("chunk-size") {
					given = append(given, fmt.Sprintf("--chunk-size %d", size))
				}
				if cmd.Flags().Changed("chunk-overlap") {
					given = append(given, fmt.Sprintf("--chunk-overlap %d", overlap))
				}
				if len(given) > 0 {
					return usagef("%s: %v", strings.Join(given, " "), err)
				}
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
	cmd.Flags().IntVar(&size, "chunk-size", 0, "at most `N` cl100k_base tokens per chunk (default: the config's splitter.chunkSize)")
	cmd.Flags().IntVar(&overlap, "chunk-overlap", 0, "`N` tokens repeated from the end of the previous chunk (default: the config's splitter.chunkOverlap)")
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
			fmt.Fprintf(a.stderr, "sluice: %s: %s\n", path, splitError(err))
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	// Reading a named pipe would wait for a writer, a device might never end.
	if err := reader.CheckRegular(path, st); err != nil {
		return fail(err)
	}
	f := reader.File{ID: path, Path: path, Size: st.Size()}
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
				// Chunks come after the first read, which found any byte-order mark.
				return printChunk(out, asJSON, path, i-1, c, int(content.TextStart()))
			})
			if err != nil {
				fail(err)()
			}
		}
	}
	text, start, err := readText(f)
	if err != nil {
		return fail(err)
	}
	chunks := sp.Split(text)
	return func() {
		for i, c := range chunks {
			if err := printChunk(out, asJSON, path, i, c, start); err != nil {
				fail(err)()
				return
			}
		}
	}
}

// readText reads a whole file: its text, and the offset in the file of the
// text's first byte (3 after a UTF-8 byte-order mark, which the text lacks).
func readText(f reader.File) (string, int, error) {
	c, err := reader.Open(f)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	var sb strings.Builder
	sb.Grow(int(f.Size))
	if _, err := io.Copy(&sb, c); err != nil {
		return "", 0, err
	}
	return sb.String(), int(c.TextStart()), nil
}

// splitError words a failure of one file for `split`: what is wrong and how
// to fix the file itself, without the remedies of reader.FileError.Error
// that name source settings (source.exclude), which split does not read.
func splitError(err error) string {
	var fe *reader.FileError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	s := fe.Problem()
	if fix := fe.Fix(); fix != "" {
		s += "; " + fix
	}
	return s
}

// printChunk prints chunk i of file; start is the offset in the file of the
// text the chunk's offsets count from, so that the printed offsets are byte
// offsets into the file.
func printChunk(w io.Writer, asJSON bool, file string, i int, c splitter.Chunk, start int) error {
	if asJSON {
		return json.NewEncoder(w).Encode(splitLine{File: file, Index: i, Text: c.Text, Start: start + c.Start, End: start + c.End, Tokens: c.Tokens, StartChar: c.CharStart, EndChar: c.CharEnd})
	}
	_, err := fmt.Fprintf(w, "── %s #%d  bytes %d–%d  %d tokens\n%s\n", file, i, start+c.Start, start+c.End, c.Tokens, c.Text)
	return err
}
