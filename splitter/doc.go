// Package splitter splits text into chunks for embedding, reproducing the
// SentenceSplitter of LlamaIndex.TS (npm llamaindex 0.12.1) in Go: chunk
// sizes and overlaps are counted in cl100k_base tokens, and the same
// settings give the same chunks.
//
// # Algorithm
//
// A text that fits ChunkSize tokens is one chunk. A longer one is cut by the
// first of these that yields more than one part, and each part that is still
// too long is cut again the same way:
//
//  1. paragraphs: before each "\n\n\n";
//  2. sentences: the boundaries of the `natural` sentence tokenizer with its
//     English and Spanish abbreviation lists (abbreviations, URLs, e-mail
//     addresses and numbers never end a sentence), computed here in linear
//     time instead of natural's quadratic placeholder substitution;
//  3. phrases: the matches of [^,.;。？！]+[,.;。？！]?;
//  4. words: before each space;
//  5. characters.
//
// The parts are then merged greedily into chunks of at most ChunkSize tokens
// (the sum of the parts' own token counts, as in LlamaIndex); each chunk
// after the first starts with the longest tail of the previous chunk's parts
// that sums to at most ChunkOverlap tokens. Chunks are trimmed of white space
// and blank chunks are dropped.
//
// The text is tokenized about once. A part that is too long is only
// counted up to ChunkSize+1 tokens, and its parts take the counts of the
// pre-tokens they share with it: only the few pre-tokens around each cut
// are counted again. A chunk's exact count, and its overlap's, are added up
// from its parts' counts: only the pre-tokens at its trimmed ends and at
// joins where two parts tokenize differently together than apart are
// counted again. The sentence boundaries are found by jumping from
// candidate byte to candidate byte ('.', ':', '@', digits, delimiters).
//
// Splitter is safe for concurrent use: split documents on as many goroutines
// as there are cores. SplitReader splits a stream of any length in bounded
// memory.
//
// # Memory
//
// Beyond the text (for SplitReader, a window of about 1 MiB), splitting
// holds a few MiB whatever the text, in time linear in its length:
//
//   - Pieces are merged into chunks as the cutters find them, and only the
//     unfinished chunk's are kept: a run of spaces is cut into one piece
//     per space, a word into one per character.
//   - Counting a part stops past ChunkSize tokens, and a pre-token too long
//     to fit ChunkSize tokens (longer than ChunkSize times 128 bytes,
//     cl100k_base's longest token) is not even merged: a megabyte of spaces
//     or letters is one pre-token. Merging one that fits takes about 20
//     bytes per byte, 2.5 MiB at most with the default ChunkSize. Long runs
//     of one repeated unit ("aaaa", "----") are counted once per length,
//     and a long pre-token is merged in parts between bytes that no token
//     holds side by side ("qz"), which is exact. The caches of counts are
//     bounded (about 7 MiB in all).
//   - Sentence ends are found in sections of 64 KiB, each ended at white
//     space followed by a letter or a digit, where no match of natural's
//     patterns can cross. Only a long stretch of text without white space
//     that is dense in abbreviations or numbers ("Dr.Dr.Dr.", "1.5,2.5,")
//     makes sentence cutting hold more: about 5 bytes per byte of that
//     stretch, which SplitReader's windows bound to 2 MiB.
//
// # Deliberate differences from LlamaIndex.TS
//
// Where LlamaIndex.TS is wrong or cannot be followed, Sluice differs:
//
//   - No chunk exceeds ChunkSize, by the exact token count of its text.
//     LlamaIndex adds the next part after the overlap even when they do not
//     fit together, and trusts the sum of part counts, so its chunks exceed
//     ChunkSize (by 7 to 169 tokens in the shared fixtures; 0.12.1 does so
//     silently). Sluice drops overlap parts from the front until the next
//     part fits, and moves the last part to the next chunk when the exact
//     count is too high; when trimming makes a lone part too long
//     (" unbelievable" is 1 token, "unbelievable" 3), that part is cut finer.
//   - The overlap between two chunks is at most ChunkOverlap by the exact
//     count of the overlapping text, not only by the sum of part counts.
//   - No character is lost. LlamaIndex's phrase split uses String.match,
//     which drops delimiters that no match covers ("..", ",," or a leading
//     ","); Sluice keeps them with the preceding phrase.
//   - Chunk text is always the input text. natural's tokenizer restores its
//     placeholders in the wrong order when a URL contains an abbreviation
//     ("https://example.com/start.html" contains "art."), so LlamaIndex emits
//     the literal text "{{ABBREV_1}}"; it also lets "$&", "$'", "$`" and "$$"
//     in URLs act as replacement patterns. The sentence boundaries are the
//     same; only the text differs.
//   - The character fallback cuts between code points; LlamaIndex cuts
//     between UTF-16 code units and so splits surrogate pairs (emoji).
//   - Chunk offsets are byte offsets into the Go string: text[Start:End] ==
//     Text. CharStart and CharEnd are the UTF-16 code unit indexes that
//     LlamaIndex reports.
//   - Empty text gives no chunks (LlamaIndex returns one empty chunk).
//   - A chunk that would hold nothing beyond the previous chunk (only its
//     overlap and white space) is not emitted; LlamaIndex repeats it.
//   - Special-token strings such as "<|endoftext|>" are counted as ordinary
//     text; js-tiktoken throws on them, which makes LlamaIndex fail.
//   - Invalid UTF-8 is counted byte by byte. (Node replaces it with U+FFFD
//     when reading a file; callers that want that should do the same.)
//   - ChunkSize must be at least MinChunkSize (4), the most tokens a single
//     character can take, so LlamaIndex's "Single token exceeded chunk size"
//     cannot happen. Metadata-aware splitting fails with ErrMetadataTooLong
//     when metadata leaves fewer than MinChunkSize tokens (LlamaIndex: fewer
//     than 1) and logs a warning below SmallChunkTokens (50), as LlamaIndex.
//   - SplitReader cuts a stream into windows at paragraph separators and
//     carries the unfinished chunk from one window to the next, so its chunks
//     are those of Split on the whole text. Only when a window of about 1 MiB
//     holds no "\n\n\n" is it cut at a newline or space instead, and chunks
//     within one chunk of that cut may differ.
//
// Token counting follows js-tiktoken (LlamaIndex.TS's tokenizer), which
// differs from tiktoken-go's regular expression on some white-space runs
// ("\n \n" is one token) and treats U+FEFF as white space; the vocabulary
// is tiktoken-go's embedded cl100k_base, so nothing is downloaded.
package splitter
