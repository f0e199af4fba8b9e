package splitter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/splitter"
)

func ExampleSplitter_Split() {
	s, err := splitter.New(splitter.Config{ChunkSize: 10, ChunkOverlap: 4})
	if err != nil {
		panic(err)
	}
	text := "One fish. Two fish. Red fish. Blue fish. Old fish. New fish."
	for _, c := range s.Split(text) {
		fmt.Printf("[%d:%d] %d tokens: %s\n", c.Start, c.End, c.Tokens, c.Text)
	}
	// Output:
	// [0:29] 9 tokens: One fish. Two fish. Red fish.
	// [20:50] 9 tokens: Red fish. Blue fish. Old fish.
	// [41:60] 6 tokens: Old fish. New fish.
}

func ExampleSplitter_SplitReader() {
	s, err := splitter.New(splitter.DefaultConfig())
	if err != nil {
		panic(err)
	}
	r := strings.NewReader("A stream of any length is split in bounded memory.\n\n\nOffsets count bytes from its start.")
	err = s.SplitReader(context.Background(), r, func(c splitter.Chunk) error {
		fmt.Printf("chunk at %d-%d, %d tokens\n", c.Start, c.End, c.Tokens)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// chunk at 0-88, 18 tokens
}

func ExampleSplitter_SplitWithMetadata() {
	s, err := splitter.New(splitter.Config{ChunkSize: 64, ChunkOverlap: 8})
	if err != nil {
		panic(err)
	}
	size, _ := s.ChunkSizeFor("file_name: guide.md")
	fmt.Println("tokens left for text:", size)

	_, err = s.SplitWithMetadata("some text", strings.Repeat("tag ", 100))
	fmt.Println(errors.Is(err, splitter.ErrMetadataTooLong))
	// Output:
	// tokens left for text: 59
	// true
}

func ExampleConfig_Validate() {
	err := splitter.Config{ChunkSize: 256, ChunkOverlap: 256}.Validate()
	fmt.Println(err)
	var ce *splitter.ConfigError
	if errors.As(err, &ce) {
		fmt.Println("setting:", ce.Field)
	}
	// Output:
	// splitter.chunkOverlap: 256 is invalid: must be smaller than splitter.chunkSize (256); lower the overlap or raise the chunk size
	// setting: splitter.chunkOverlap
}
