package splitter

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
)

// fixturesDir holds reference chunks produced by LlamaIndex.TS 0.12.1 (see
// its README); it lives in the shared folder beside the repository.
const fixturesDir = "../../shared/fixtures/llamaindex-splitter"

// parityTarget is the share of LlamaIndex.TS chunks that must be reproduced
// byte for byte.
const parityTarget = 0.97

type refChunk struct {
	File  string `json:"file"`
	Index int    `json:"index"`
	Text  string `json:"text"`
}

func readRefChunks(t *testing.T, path string) (files []string, byFile map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open reference chunks: %v", err)
	}
	defer f.Close()
	byFile = map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var c refChunk
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, ok := byFile[c.File]; !ok {
			files = append(files, c.File)
		}
		byFile[c.File] = append(byFile[c.File], c.Text)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return files, byFile
}

// manifestFiles lists the fixture inputs in manifest order.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir, "input", "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	var files []string
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" {
			files = append(files, strings.SplitN(line, "\t", 2)[0])
		}
	}
	return files
}

// placeholderBug reports LlamaIndex chunks that contain the literal
// placeholders natural's tokenizer leaves behind (an abbreviation inside a
// URL): no substring of the input can equal them.
func placeholderBug(text string) bool {
	return strings.Contains(text, "{{ABBREV_") || strings.Contains(text, "{{URI_") ||
		strings.Contains(text, "{{NUMBER_") || strings.Contains(text, "{{DELIM_")
}

func TestParityLlamaIndex(t *testing.T) {
	if _, err := os.Stat(fixturesDir); err != nil {
		missing := t.Skipf
		if testenv.InCI() {
			missing = t.Fatalf // CI always has the shared folder: a skip would hide the parity check
		}
		missing("LlamaIndex.TS reference chunks not found at %s (the shared folder beside the repository): %v", fixturesDir, err)
	}
	if testing.Short() {
		t.Skip("parity over the shared fixtures is skipped in -short mode")
	}
	inputs := manifestFiles(t)
	for _, tc := range []struct{ size, overlap int }{{1024, 200}, {512, 50}} {
		t.Run(fmt.Sprintf("%d-%d", tc.size, tc.overlap), func(t *testing.T) {
			s, err := New(Config{ChunkSize: tc.size, ChunkOverlap: tc.overlap})
			if err != nil {
				t.Fatal(err)
			}
			_, ref := readRefChunks(t, filepath.Join(fixturesDir, fmt.Sprintf("chunks-%d-%d.jsonl", tc.size, tc.overlap)))
			var total, same, oversize, placeholder, dropped int
			var unexplained []string
			for _, file := range inputs {
				b, err := os.ReadFile(filepath.Join(fixturesDir, "input", file))
				if err != nil {
					t.Fatal(err)
				}
				text := strings.ToValidUTF8(string(b), "\uFFFD")
				ours := map[string]int{}
				for _, c := range s.Split(text) {
					ours[c.Text]++
				}
				for i, r := range ref[file] {
					total++
					switch {
					case ours[r] > 0:
						ours[r]--
						same++
					case s.CountTokens(r) > tc.size:
						oversize++
					case placeholderBug(r):
						placeholder++
					case !strings.Contains(text, r):
						dropped++ // LlamaIndex lost characters (see cutPhrases)
					default:
						unexplained = append(unexplained, fmt.Sprintf("%s#%d (%d tokens)", file, i, s.CountTokens(r)))
					}
				}
			}
			pct := 100 * float64(same) / float64(total)
			t.Logf("chunkSize %d / chunkOverlap %d: %d of %d LlamaIndex.TS chunks reproduced byte for byte (%.2f%%); "+
				"differences: %d over chunkSize (rule 2), %d with literal placeholders, %d with dropped delimiters, %d other",
				tc.size, tc.overlap, same, total, pct, oversize, placeholder, dropped, len(unexplained))
			fmt.Printf("parity %d/%d: %.2f%% (%d/%d)\n", tc.size, tc.overlap, pct, same, total)
			for _, u := range unexplained {
				t.Errorf("not reproduced, and not explained by a documented difference: %s", u)
			}
			if float64(same) < parityTarget*float64(total) {
				t.Errorf("parity %.2f%% is below %.0f%%", pct, 100*parityTarget)
			}
		})
	}
}
