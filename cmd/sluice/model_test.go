package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/reader"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
)

// Settings of TestModelIncrementalRuns. The committed test plays a few
// seeds of a few dozen steps, well under a minute under -race on two
// cores; SLUICE_MODEL_SEEDS and SLUICE_MODEL_STEPS play more, and
// SLUICE_MODEL_SEED replays one seed (the failure message names it), or
// with SLUICE_MODEL_SEEDS starts there.
const (
	modelSeedsEnv = "SLUICE_MODEL_SEEDS"
	modelStepsEnv = "SLUICE_MODEL_STEPS"
	modelSeedEnv  = "SLUICE_MODEL_SEED"
	// modelStrictEnv, set, makes the model expect offsets rewritten when
	// a chunk moves (see model.tolerate).
	modelStrictEnv = "SLUICE_MODEL_STRICT_OFFSETS"
	modelSeeds     = 3
	modelSteps     = 10
	modelDims      = 16
	// modelStream is the size above which the runs split a file as a
	// stream: pipeline.memoryBudgetMB 1, over 32.
	modelStream = 1 << 20 / 32
)

// TestModelIncrementalRuns is a model-based test of incremental runs. Each
// seed plays random steps on a folder, its settings and its index: files
// created, edited, appended to, truncated, deleted, renamed and copied
// (nested folders, identical contents, empty, white-space-only, binary and
// invalid UTF-8 files, files that become valid again, files split as a
// stream); other splitter, metadata, excludeFileMetadata, include and
// exclude settings; then one command: `run` (with --full, --verify,
// --include, --exclude or --dry-run at random), `failed retry`, `delete
// --doc-id`, `index delete`, a lost state file (then a run), a lost store
// (then a run, which must say store_lost), chunks deleted from or written
// into the index behind the manifest's back (then `run --verify`), or a run
// interrupted part-way, maybe with files and settings put back before the
// next run.
//
// After each command the store must hold exactly what the model expects
// (node ids, texts, offsets, metadata, reference documents and vectors):
// for each document that the command read and whose file is valid, what a
// clean run with the same settings writes into a fresh store; for one that
// fails, what the store held before (the chunks of its last successful
// run); for one whose file is gone, nothing, unless the command did not
// select it or the manifest does not know it (a lost state file: such a
// document stays until --full or --verify); other documents as they were.
// The dead-letter table must list the failing documents the README says it
// keeps, the manifest must record the nodes the store holds, and the
// report's counts must agree with the model: files seen, failed and
// deleted, chunks written (or planned) and deleted, and, for a second
// plain run right after a plain run, nothing to do.
func TestModelIncrementalRuns(t *testing.T) {
	seeds, steps := modelSeeds, modelSteps
	if testing.Short() {
		seeds = 1
	}
	first := uint64(1)
	if v := os.Getenv(modelSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a seed", modelSeedEnv, v)
		}
		first, seeds = n, 1
	}
	if v := os.Getenv(modelSeedsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of seeds", modelSeedsEnv, v)
		}
		seeds = n
	}
	if v := os.Getenv(modelStepsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of steps", modelStepsEnv, v)
		}
		steps = n
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			m := newModel(t, seed)
			for range steps {
				m.step()
			}
			t.Logf("%d steps, %d runs interrupted before their end; commands: %v", m.n, m.interrupted, m.ops)
			if m.staleOffsets > 0 {
				t.Logf("%d chunks kept the offsets of before they moved (%s unset)", m.staleOffsets, modelStrictEnv)
			}
		})
	}
}

// modelSettings are the settings a step may change.
type modelSettings struct {
	chunkSize, chunkOverlap int
	include, exclude        []string
	metadata                string // YAML of source.metadata
	excludeFileMetadata     []string
}

// Choices of the settings.
var (
	modelSplits   = [][2]int{{32, 0}, {40, 8}, {64, 10}, {128, 30}}
	modelIncludes = [][]string{
		{"**/*.md", "**/*.txt"},
		{"**/*.md"},
		{"**/*.md", "**/*.txt", "**/*.rst"},
		{"a/**", "*.txt"},
	}
	modelExcludes = [][]string{{}, {"b/**"}, {"**/n1*"}, {"a/b"}}
	modelMetadata = []string{
		"[]",
		`[{match: "a/**", set: {tag: red}}]`,
		`[{match: "**/*.md", set: {level: 2, tags: [x, y]}}]`,
		`[{match: "a/**", set: {tag: blue}}, {match: "**", set: {lang: en}}]`,
	}
	modelFileKeys = [][]string{{}, {"file_size", "last_modified_date"}, {"creation_date"}, {"file_name", "file_type", "file_path"}}
	// Flags of runs over part of the folder.
	modelIncludeFlags = []string{"a/**", "**/*.txt", "b/**/*.md", "**/n2*"}
	modelExcludeFlags = []string{"a/**", "**/n2*", "c"}
	modelDirs         = []string{"", "a/", "a/b/", "b/", "c/d/"}
	modelExts         = []string{".md", ".md", ".txt", ".rst"}
	modelWords        = strings.Fields("alpha beta gamma delta river stone cloud north south quiet harbor lantern " +
		"café naïve 日本語 東京 🙂 rocket🚀 zeta omega meadow copper signal winter market 42 7 the of and")
)

// model is the folder, the settings and what the index and the manifest
// hold, as the test expects them, with the work folder the commands run in.
type model struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	work  string // the commands' working folder: config, store and state
	root  string // the folder ingested
	files map[string]string
	clock time.Time // the next modification time given to a file
	set   modelSettings
	// stored is what the store holds, by document, nodes sorted by id:
	// after each command, what the test found it holds and expected.
	stored map[string][]sink.Node
	// unknown are the documents the store holds that the manifest does
	// not know (its state file was lost).
	unknown map[string]bool
	// found are the documents whose nodes the manifest knows only from a
	// listing of the store: they failed after a lost state file. Sluice
	// does not adopt vectors it did not write (README), so the run that
	// ingests such a document embeds every chunk of it again.
	found map[string]bool
	// failed is the dead-letter table.
	failed map[string]bool
	// before, set while a command after an interrupted run is checked,
	// is the store as that command found it (see tolerate).
	before map[string][]sink.Node
	// lost and foreign count the chunks tamper deleted from the store
	// and wrote into it, for the next run, with --verify, to find.
	lost, foreign int
	staleOffsets  int // chunks found with the offsets of before a move (see tolerate)
	interrupted   int // runs interrupted before their end
	ops           map[string]int
	n             int      // steps played
	log           []string // what each step did, for the failure message
	cleans        int      // clean runs made
}

func newModel(t *testing.T, seed uint64) *model {
	work := t.TempDir()
	t.Chdir(work)
	m := &model{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5111ce)),
		work: work, root: filepath.Join(work, "corpus"),
		files: map[string]string{}, clock: time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC),
		set:    modelSettings{chunkSize: 64, chunkOverlap: 10, include: modelIncludes[0], exclude: modelExcludes[0], metadata: modelMetadata[0]},
		stored: map[string][]sink.Node{}, unknown: map[string]bool{}, found: map[string]bool{}, failed: map[string]bool{},
	}
	if err := os.MkdirAll(m.root, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 6 + m.rng.IntN(6) {
		m.create()
	}
	m.logf("initial files: %d", len(m.files))
	return m
}

func (m *model) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf("step %d: ", m.n)+fmt.Sprintf(format, args...))
}

// count counts a command of kind what, for the summary of the seed.
func (m *model) count(what string) {
	if m.ops == nil {
		m.ops = map[string]int{}
	}
	m.ops[what]++
}

// fatalf fails the seed, with what its steps did.
func (m *model) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d (replay with %s=%d), step %d: %s\nsteps:\n  %s", m.seed, modelSeedEnv, m.seed, m.n,
		fmt.Sprintf(format, args...), strings.Join(m.log, "\n  "))
}

// step changes some files, maybe a setting, and runs one command.
func (m *model) step() {
	m.n++
	for range 1 + m.rng.IntN(3) {
		m.editFiles()
	}
	if m.rng.IntN(4) == 0 {
		m.changeSettings()
	}
	switch r := m.rng.IntN(100); {
	case r < 8 && len(m.failed) > 0:
		m.retry()
	case r < 14:
		m.deleteDoc()
	case r < 18:
		m.loseManifest()
		m.run(m.runFlags())
	case r < 23 && len(m.stored) > 0:
		m.tamper()
		m.run(runChoice{verify: true})
	case r < 33:
		m.interrupt()
	case r < 36:
		m.indexDelete()
	case r < 41 && m.canLoseStore():
		m.loseStore()
		m.runAfter(runChoice{}, false, true)
	default:
		m.run(m.runFlags())
	}
}

// Files.

func (m *model) path(id string) string { return filepath.Join(m.root, filepath.FromSlash(id)) }

// write writes a file of the folder and gives it the next modification
// time, so that each change shows in its size or time.
func (m *model) write(id, body string) {
	m.writeAt(id, body, m.tick())
}

func (m *model) tick() time.Time {
	m.clock = m.clock.Add(time.Duration(1+m.rng.IntN(5)) * time.Second)
	return m.clock
}

func (m *model) writeAt(id, body string, mtime time.Time) {
	p := m.path(id)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		m.t.Fatal(err)
	}
	m.files[id] = body
}

func (m *model) remove(id string) {
	if err := os.Remove(m.path(id)); err != nil {
		m.t.Fatal(err)
	}
	delete(m.files, id)
}

func (m *model) newName() string {
	for {
		id := modelDirs[m.rng.IntN(len(modelDirs))] + "n" + strconv.Itoa(m.rng.IntN(8)) + modelExts[m.rng.IntN(len(modelExts))]
		if _, ok := m.files[id]; !ok && !m.isDir(id) {
			return id
		}
	}
}

// isDir reports whether id is a folder of the model's files.
func (m *model) isDir(id string) bool {
	for f := range m.files {
		if strings.HasPrefix(f, id+"/") {
			return true
		}
	}
	return false
}

func (m *model) exists(id string) bool {
	_, ok := m.files[id]
	return ok
}

func (m *model) pick() (string, bool) {
	if len(m.files) == 0 {
		return "", false
	}
	ids := slices.Sorted(maps.Keys(m.files))
	return ids[m.rng.IntN(len(ids))], true
}

func (m *model) sentence() string {
	n := 3 + m.rng.IntN(12)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = modelWords[m.rng.IntN(len(modelWords))]
	}
	s := strings.Join(ws, " ") + "."
	if m.rng.IntN(6) == 0 {
		s += "\n\n"
	} else {
		s += " "
	}
	return s
}

func (m *model) text(sentences int) string {
	var b strings.Builder
	for range sentences {
		b.WriteString(m.sentence())
	}
	return b.String()
}

// body returns a new file's contents: mostly a few sentences, sometimes
// enough to be split as a stream.
func (m *model) body() string {
	switch m.rng.IntN(50) {
	case 0, 1:
		return m.text(700 + m.rng.IntN(200))
	case 2:
		return modelOdd[m.rng.IntN(len(modelOdd))]
	case 3: // a byte-order mark, which the offsets do not count
		return "\ufeff" + m.text(1+m.rng.IntN(30))
	case 4: // Windows line ends
		return strings.ReplaceAll(m.text(1+m.rng.IntN(30)), "\n", "\r\n")
	case 5: // a word longer than a chunk
		return m.text(m.rng.IntN(3)) + strings.Repeat("x"+modelWords[m.rng.IntN(len(modelWords))], 150) + " " + m.text(m.rng.IntN(3))
	}
	return m.text(1 + m.rng.IntN(30))
}

// spoil returns body made to fail: empty, white space, binary or invalid
// UTF-8 somewhere (near its end for a large file, whose first chunks are
// then written before it fails).
func (m *model) spoil(body string) string {
	switch m.rng.IntN(5) {
	case 0:
		return ""
	case 1:
		return []string{" \n\t \n", "\ufeff \u3000\n", "\u00a0\u2003"}[m.rng.IntN(3)]
	case 2:
		at := m.rng.IntN(len(body) + 1)
		return body[:at] + "\x00" + body[at:]
	default:
		at := len(body) - m.rng.IntN(min(len(body), 200)+1)
		if m.rng.IntN(2) == 0 {
			at = m.rng.IntN(len(body) + 1)
		}
		for at > 0 && at < len(body) && !utf8.RuneStart(body[at]) {
			at--
		}
		return body[:at] + "\xff" + body[at:]
	}
}

// modelFails reports whether a file of body fails: it is not UTF-8, holds
// a NUL byte (binary, or UTF-16), or holds nothing but a byte-order mark
// and white space as JavaScript's \s has it (the splitter's).
func modelFails(body string) bool {
	if !utf8.ValidString(body) || strings.Contains(body, "\x00") {
		return true
	}
	return strings.TrimFunc(strings.TrimPrefix(body, "\ufeff"), func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
			return true
		}
		return r >= 0x2000 && r <= 0x200a
	}) == ""
}

// modelOdd are file contents at the edges of text: white space that
// JavaScript's \s has or has not, a byte-order mark, control characters.
var modelOdd = []string{"\u0085", "\u200b", "\ufeff\ufeff", "\u00a0\u3000", "\u180e", "\x01\x02", "\ufeff", "\v\f", "\u2028x\u2029"}

func (m *model) create() {
	id := m.newName()
	body := m.body()
	if m.rng.IntN(8) == 0 {
		body = m.spoil(body)
	}
	m.write(id, body)
	m.logf("create %s (%d bytes, fails %v)", id, len(body), modelFails(body))
}

// editFiles applies one random change to the folder.
func (m *model) editFiles() {
	id, ok := m.pick()
	r := m.rng.IntN(100)
	if !ok || r < 12 {
		m.create()
		return
	}
	body := m.files[id]
	switch {
	case r < 30: // an edit in the middle: most chunks stay
		at := m.cut(body)
		end := min(len(body), at+m.rng.IntN(80))
		end = m.align(body, end)
		nb := body[:at] + m.text(m.rng.IntN(3)) + body[end:]
		m.write(id, nb)
		m.logf("edit %s at %d..%d (%d → %d bytes)", id, at, end, len(body), len(nb))
	case r < 40:
		m.write(id, body+m.text(1+m.rng.IntN(5)))
		m.logf("append to %s", id)
	case r < 47: // a cut anywhere, even inside a character
		at := m.rng.IntN(len(body) + 1)
		m.write(id, body[:at])
		m.logf("truncate %s to %d bytes (fails %v)", id, at, modelFails(body[:at]))
	case r < 55:
		m.remove(id)
		m.logf("delete %s", id)
	case r < 62:
		to := m.newName()
		if err := os.MkdirAll(filepath.Dir(m.path(to)), 0o755); err != nil {
			m.t.Fatal(err)
		}
		if err := os.Rename(m.path(id), m.path(to)); err != nil {
			m.t.Fatal(err)
		}
		delete(m.files, id)
		m.files[to] = body
		m.logf("rename %s to %s", id, to)
	case r < 66:
		m.renameDir()
	case r < 72:
		to := m.newName()
		m.write(to, body)
		m.logf("copy %s to %s", id, to)
	case r < 80:
		m.write(id, m.spoil(body))
		m.logf("spoil %s", id)
	case r < 88:
		nb := m.body()
		m.write(id, nb)
		m.logf("replace %s (%d bytes, fails %v)", id, len(nb), modelFails(nb))
	case r < 94: // same size and time, other contents: the change stamp tells
		if len(body) == 0 || !utf8.ValidString(body) {
			return
		}
		fi, err := os.Stat(m.path(id))
		if err != nil {
			m.t.Fatal(err)
		}
		b := []byte(body)
		i := m.rng.IntN(len(b))
		if b[i] >= 'a' && b[i] < 'z' {
			b[i]++
		} else if b[i] == 'z' {
			b[i] = 'a'
		}
		m.writeAt(id, string(b), fi.ModTime())
		m.logf("rewrite %s in place, same size and time", id)
	default: // touched: a new time, the same contents
		mt := m.tick()
		if err := os.Chtimes(m.path(id), mt, mt); err != nil {
			m.t.Fatal(err)
		}
		m.logf("touch %s", id)
	}
}

// cut returns a random offset of body that starts a character.
func (m *model) cut(body string) int {
	return m.align(body, m.rng.IntN(len(body)+1))
}

func (m *model) align(body string, at int) int {
	for at > 0 && at < len(body) && !utf8.RuneStart(body[at]) {
		at--
	}
	return at
}

// renameDir moves a folder of the model's files elsewhere.
func (m *model) renameDir() {
	from := []string{"a", "a/b", "b", "c/d"}[m.rng.IntN(4)]
	to := []string{"e", "b/f", "c/d2", "a/g"}[m.rng.IntN(4)]
	if !m.isDir(from) || strings.HasPrefix(to, from+"/") {
		return
	}
	if _, err := os.Lstat(m.path(to)); err == nil {
		return // a folder there, maybe empty
	}
	if _, ok := m.files[to]; ok {
		return
	}
	if err := os.MkdirAll(filepath.Dir(m.path(to)), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Rename(m.path(from), m.path(to)); err != nil {
		m.t.Fatal(err)
	}
	for id, body := range maps.Clone(m.files) {
		if rest, ok := strings.CutPrefix(id, from+"/"); ok {
			delete(m.files, id)
			m.files[to+"/"+rest] = body
		}
	}
	m.logf("rename folder %s to %s", from, to)
}

// changeSettings changes one setting of the configuration.
func (m *model) changeSettings() {
	switch m.rng.IntN(5) {
	case 0:
		s := modelSplits[m.rng.IntN(len(modelSplits))]
		m.set.chunkSize, m.set.chunkOverlap = s[0], s[1]
		m.logf("settings: chunkSize %d, chunkOverlap %d", s[0], s[1])
	case 1:
		m.set.include = modelIncludes[m.rng.IntN(len(modelIncludes))]
		m.logf("settings: include %q", m.set.include)
	case 2:
		m.set.exclude = modelExcludes[m.rng.IntN(len(modelExcludes))]
		m.logf("settings: exclude %q", m.set.exclude)
	case 3:
		m.set.metadata = modelMetadata[m.rng.IntN(len(modelMetadata))]
		m.logf("settings: metadata %s", m.set.metadata)
	default:
		m.set.excludeFileMetadata = modelFileKeys[m.rng.IntN(len(modelFileKeys))]
		m.logf("settings: excludeFileMetadata %q", m.set.excludeFileMetadata)
	}
}

// Configuration, store and commands.

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// config writes, into dir, the configuration of the model's settings with
// its store and state file in dir, and returns its path.
func (m *model) config(dir string) string {
	s := m.set
	yaml := fmt.Sprintf(`source:
  include: %s
  exclude: %s
  metadata: %s
  excludeFileMetadata: %s
  dir: %q
splitter: {chunkSize: %d, chunkOverlap: %d}
embedder: {provider: hash, dimensions: %d, batchSize: 5, concurrency: 2}
sink: {type: local, local: {path: %q}}
state: {path: %q}
pipeline: {memoryBudgetMB: 1}
`, quoteList(s.include), quoteList(s.exclude), s.metadata, quoteList(s.excludeFileMetadata), m.root, s.chunkSize, s.chunkOverlap, modelDims,
		filepath.Join(dir, "index.db"), filepath.Join(dir, "state.db"))
	p := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		m.t.Fatal(err)
	}
	return p
}

// sluice runs the command line with the configuration of dir.
func (m *model) sluice(dir string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	args = append(args, "--config", m.config(dir), "--env-file", os.DevNull)
	code = execute(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// modelReport is the part of a run's report the model checks.
type modelReport struct {
	FilesSeen      int `json:"files_seen"`
	FilesIngested  int `json:"files_ingested"`
	FilesUnchanged int `json:"files_unchanged"`
	FilesDeleted   int `json:"files_deleted"`
	FilesFailed    int `json:"files_failed"`
	Failures       []struct {
		Path string `json:"path"`
	} `json:"failures"`
	ChunksWritten  int   `json:"chunks_written"`
	ChunksReused   int   `json:"chunks_reused"`
	ChunksDeleted  int   `json:"chunks_deleted"`
	TokensEmbedded int64 `json:"tokens_embedded"`
	ChunksPlanned  int   `json:"chunks_planned"`
	StoreLost      bool  `json:"store_lost"`
	Complete       bool  `json:"complete"`
	Verify         *struct {
		NodesMissing  int `json:"nodes_missing"`
		NodesUnlisted int `json:"nodes_unlisted"`
	} `json:"verify"`
}

func (r *modelReport) failures() []string {
	out := []string{}
	for _, f := range r.Failures {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

// runReport runs a command that prints a report with --json in dir.
func (m *model) runReport(dir string, args ...string) *modelReport {
	m.t.Helper()
	stdout, stderr, code := m.sluice(dir, append(args, "--json")...)
	if code != exitOK && code != exitPartial {
		m.fatalf("sluice %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	var rep modelReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || !rep.Complete {
		m.fatalf("sluice %s: report %q (%v), stderr %s", strings.Join(args, " "), stdout, err, stderr)
	}
	if (code == exitPartial) != (rep.FilesFailed > 0) {
		m.fatalf("sluice %s: exit %d with %d failed files", strings.Join(args, " "), code, rep.FilesFailed)
	}
	return &rep
}

// readStore returns the nodes of the store of dir by document, sorted by
// id.
func (m *model) readStore(dir string) map[string][]sink.Node {
	m.t.Helper()
	out := map[string][]sink.Node{}
	path := filepath.Join(dir, "index.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return out
	}
	st, err := local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		m.t.Fatal(err)
	}
	defer st.Close()
	nodes, err := st.GetNodes(context.Background(), nil, nil, 0)
	if err != nil {
		m.t.Fatal(err)
	}
	for _, n := range nodes {
		out[n.RefDocID] = append(out[n.RefDocID], n)
	}
	for _, ns := range out {
		slices.SortFunc(ns, func(a, b sink.Node) int { return strings.Compare(a.ID, b.ID) })
	}
	return out
}

// runChoice is a `sluice run` with flags.
type runChoice struct {
	full, verify, dryRun bool
	include, exclude     string // one --include or --exclude, if not ""
}

func (c runChoice) plain() bool { return c == runChoice{} }

func (c runChoice) args() []string {
	args := []string{"run"}
	if c.full {
		args = append(args, "--full")
	}
	if c.verify {
		args = append(args, "--verify")
	}
	if c.dryRun {
		args = append(args, "--dry-run")
	}
	if c.include != "" {
		args = append(args, "--include", c.include)
	}
	if c.exclude != "" {
		args = append(args, "--exclude", c.exclude)
	}
	return args
}

func (m *model) runFlags() runChoice {
	var c runChoice
	c.full = m.rng.IntN(10) == 0
	c.verify = m.rng.IntN(8) == 0
	c.dryRun = m.rng.IntN(10) == 0
	if m.rng.IntN(8) == 0 {
		c.include = modelIncludeFlags[m.rng.IntN(len(modelIncludeFlags))]
	}
	if m.rng.IntN(10) == 0 {
		c.exclude = modelExcludeFlags[m.rng.IntN(len(modelExcludeFlags))]
	}
	return c
}

// selection returns the source settings a command with c's flags reads
// the folder with.
func (m *model) selection(c runChoice) reader.Config {
	cfg := reader.Config{Dir: m.root, Include: m.set.include, Exclude: m.set.exclude}
	if c.include != "" {
		cfg.Include = []string{c.include}
	}
	if c.exclude != "" {
		cfg.Exclude = append(slices.Clone(cfg.Exclude), c.exclude)
	}
	return cfg
}

// clean runs `sluice run` with c's selection into a fresh store and
// returns its nodes and report.
func (m *model) clean(c runChoice) (map[string][]sink.Node, *modelReport) {
	m.t.Helper()
	m.cleans++
	dir := filepath.Join(m.work, "clean"+strconv.Itoa(m.cleans))
	if err := os.Mkdir(dir, 0o755); err != nil {
		m.t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rep := m.runReport(dir, runChoice{include: c.include, exclude: c.exclude}.args()...)
	return m.readStore(dir), rep
}

// prediction is what the model expects of a command.
type prediction struct {
	want            map[string][]sink.Node
	failed          map[string]bool
	unknown, found  map[string]bool
	seen            int
	failures        []string
	deleted         int // documents
	changed         int // documents whose nodes change
	ingestable      int // documents read that do not fail
	chunksWritten   int
	chunksDeleted   int
	exact           bool // chunk counts are exact: no failing document writes chunks first
	loose           bool // an interrupted run did part of the work: only files seen and failed are known
	emptyStart      bool // the store held no node when the command started
	storeLost       bool // the store was lost behind the manifest's back
	ingested        map[string]bool
	missing, extras int // what --verify must find
}

func ids(ns []sink.Node) map[string]bool {
	out := make(map[string]bool, len(ns))
	for _, n := range ns {
		out[n.ID] = true
	}
	return out
}

func (m *model) docs() []string {
	all := maps.Clone(m.files)
	for d := range m.stored {
		all[d] = ""
	}
	for d := range m.failed {
		all[d] = ""
	}
	return slices.Sorted(maps.Keys(all))
}

// predictWalk predicts a run over the folder with c's flags, given what a
// clean run with its selection writes.
func (m *model) predictWalk(c runChoice, clean map[string][]sink.Node) *prediction {
	cfg := m.selection(c)
	p := &prediction{want: map[string][]sink.Node{}, failed: maps.Clone(m.failed), unknown: maps.Clone(m.unknown), found: maps.Clone(m.found), exact: true, failures: []string{}, ingested: map[string]bool{}}
	for _, d := range m.docs() {
		prev := m.stored[d]
		body, exists := m.files[d]
		keep := func() {
			if len(prev) > 0 {
				p.want[d] = prev
			}
		}
		switch {
		case exists && cfg.Match(d):
			p.seen++
			delete(p.unknown, d) // read: the manifest learns its nodes
			if modelFails(body) {
				if m.unknown[d] && len(prev) > 0 {
					p.found[d] = true
				}
				keep()
				p.failed[d] = true
				p.failures = append(p.failures, d)
				if len(body) > modelStream {
					p.exact = false
				}
				continue
			}
			delete(p.failed, d)
			p.ingestable++
			p.ingested[d] = true
			now := clean[d]
			if len(now) == 0 {
				m.fatalf("the clean run wrote no chunk of %s, which the model takes for valid", d)
			}
			p.want[d] = now
			delete(p.found, d)
			var base map[string]bool
			if !c.full && !m.unknown[d] && !m.found[d] {
				base = ids(prev)
			}
			for _, n := range now {
				if !base[n.ID] {
					p.chunksWritten++
				}
			}
			if c.dryRun && m.unknown[d] {
				// A dry run plans from the manifest: a document it does
				// not know counts as new, with no stale chunks.
				continue
			}
			m.countReplaced(p, prev, now)
		case exists:
			keep()
			if cfg.Excludes(d) {
				delete(p.failed, d)
			}
		default: // the file is gone
			delete(p.failed, d)
			if len(prev) > 0 && cfg.Match(d) && (!m.unknown[d] || c.full || c.verify) {
				p.deleted++
				p.chunksDeleted += len(prev)
				delete(p.unknown, d)
				delete(p.found, d)
				continue
			}
			keep()
		}
	}
	return p
}

// predictRetry predicts `sluice failed retry`.
func (m *model) predictRetry(clean map[string][]sink.Node) *prediction {
	cfg := m.selection(runChoice{})
	p := &prediction{want: maps.Clone(m.stored), failed: maps.Clone(m.failed), unknown: maps.Clone(m.unknown), found: maps.Clone(m.found), exact: true, failures: []string{}, ingested: map[string]bool{}}
	for _, d := range slices.Sorted(maps.Keys(m.failed)) {
		if !cfg.Match(d) {
			continue
		}
		p.seen++
		body, exists := m.files[d]
		if !exists || modelFails(body) {
			p.failures = append(p.failures, d)
			if len(body) > modelStream {
				p.exact = false
			}
			continue
		}
		delete(p.failed, d)
		delete(p.unknown, d)
		delete(p.found, d)
		p.ingestable++
		p.ingested[d] = true
		now, prev := clean[d], m.stored[d]
		p.want[d] = now
		var base map[string]bool
		if !m.found[d] {
			base = ids(prev)
		}
		for _, n := range now {
			if !base[n.ID] {
				p.chunksWritten++
			}
		}
		m.countReplaced(p, prev, now)
	}
	return p
}

// countReplaced counts, into p, the chunks of prev that a document's
// nodes now no longer hold, and the document as changed if now differs
// from prev by more than the model tolerates.
func (m *model) countReplaced(p *prediction, prev, now []sink.Node) {
	keepIDs := ids(now)
	for _, n := range prev {
		if !keepIDs[n.ID] {
			p.chunksDeleted++
		}
	}
	if w, _ := m.tolerate(prev, now); !reflect.DeepEqual(modelView(prev), w) {
		p.changed++
	}
}

// nodeView is what of a node the model compares, vectors included.
type modelNode struct {
	ID, Doc, Text string
	Start, End    int
	Meta          string
	Vec           string
}

func modelView(ns []sink.Node) []modelNode {
	out := make([]modelNode, len(ns))
	for i, n := range ns {
		meta, err := json.Marshal(n.Metadata)
		if err != nil {
			panic(err)
		}
		out[i] = modelNode{ID: n.ID, Doc: n.RefDocID, Text: n.Text, Start: n.StartChar, End: n.EndChar, Meta: string(meta), Vec: fmt.Sprint(n.Embedding)}
	}
	return out
}

// checkStore checks that the store holds what p expects, and takes it as
// the model's.
func (m *model) checkStore(what string, want map[string][]sink.Node) {
	m.t.Helper()
	got := m.readStore(m.work)
	var diffs []string
	for _, d := range m.docsOf(got, want) {
		w, n := m.tolerate(got[d], want[d])
		g := modelView(got[d])
		m.staleOffsets += n
		if reflect.DeepEqual(g, w) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: %d nodes, want %d%s", d, len(g), len(w), firstDiff(g, w)))
	}
	if len(diffs) > 0 {
		m.fatalf("after %s the store differs from the model in %d documents:\n    %s", what, len(diffs), strings.Join(diffs, "\n    "))
	}
	m.stored = got
}

// tolerate returns the view of want, less the divergence
// TestModelIncrementalRuns knows of unless SLUICE_MODEL_STRICT_OFFSETS is
// set: a chunk that a run kept as it was (its text, ordinal and metadata
// unchanged) keeps its earlier offsets even when an edit before it moved
// it, as the manifest does not record offsets. The earlier chunks are
// those of the store the command found: after an interrupted run, m.before,
// as that run may have committed documents (and the files may then be put
// back, moving their chunks again) without the model knowing.
func (m *model) tolerate(got, want []sink.Node) (view []modelNode, tolerated int) {
	w := modelView(want)
	if os.Getenv(modelStrictEnv) != "" {
		return w, 0
	}
	stored := m.stored
	if m.before != nil {
		stored = m.before
	}
	before := map[string]modelNode{}
	for _, ns := range stored {
		for _, n := range modelView(ns) {
			before[n.ID] = n
		}
	}
	g := map[string]modelNode{}
	for _, n := range modelView(got) {
		g[n.ID] = n
	}
	for i, n := range w {
		gn, ok := g[n.ID]
		if !ok || gn == n || gn != before[n.ID] {
			continue
		}
		if moved := n; true {
			moved.Start, moved.End = gn.Start, gn.End
			if moved == gn {
				w[i] = moved
				tolerated++
			}
		}
	}
	return w, tolerated
}

func (m *model) docsOf(a, b map[string][]sink.Node) []string {
	all := maps.Clone(a)
	maps.Copy(all, b)
	return slices.Sorted(maps.Keys(all))
}

// firstDiff describes the first node that differs between got and want.
func firstDiff(got, want []modelNode) string {
	g := map[string]modelNode{}
	for _, n := range got {
		g[n.ID] = n
	}
	w := map[string]modelNode{}
	for _, n := range want {
		w[n.ID] = n
		if gn, ok := g[n.ID]; !ok {
			return fmt.Sprintf("; missing %s %q", n.ID, n.Text)
		} else if gn != n {
			return fmt.Sprintf("; %s differs:\n      got  %+v\n      want %+v", n.ID, gn, n)
		}
	}
	for _, n := range got {
		if _, ok := w[n.ID]; !ok {
			return fmt.Sprintf("; extra %s %q %s", n.ID, n.Text, n.Meta)
		}
	}
	return ""
}

// checkManifest checks that the manifest records, for each document, the
// nodes the store holds (committed, or pending for a document that failed
// after a lost state file), and no document the model takes for unknown to
// it; the documents the command ingested have no pending ids.
func (m *model) checkManifest(what string, ingested map[string]bool) {
	m.t.Helper()
	path := filepath.Join(m.work, "state.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return
	}
	ctx := context.Background()
	st, err := state.OpenReadOnly(ctx, path, state.LocalScope(filepath.Join(m.work, "index.db")))
	if err != nil {
		m.t.Fatal(err)
	}
	defer st.Close()
	docs, err := st.DocIDs(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	var want []string
	for d, ns := range m.stored {
		if len(ns) > 0 && !m.unknown[d] {
			want = append(want, d)
		}
	}
	slices.Sort(want)
	if !slices.Equal(docs, want) {
		m.fatalf("after %s the manifest records %q, want %q", what, docs, want)
	}
	for _, d := range docs {
		doc, _, err := st.Doc(ctx, d)
		if err != nil {
			m.t.Fatal(err)
		}
		acked, intended, err := st.Pending(ctx, d)
		if err != nil {
			m.t.Fatal(err)
		}
		// Pending ids are those a listing found of a document that
		// failed after a lost state file: it keeps them until it is
		// ingested or removed, also when its dead letter goes (its file
		// is gone, or excluded).
		if len(acked)+len(intended) > 0 && ingested[d] {
			m.fatalf("after %s the manifest holds %d acknowledged and %d intended ids of %s, which did not fail", what, len(acked), len(intended), d)
		}
		if os.Getenv("SLUICE_MODEL_DEBUG") == d {
			m.t.Logf("step %d, %s: %s: record %v (%d ids), %d acknowledged, %d intended, failed %v", m.n, what, d, doc.Stamp, len(doc.NodeIDs), len(acked), len(intended), m.failed[d])
		}
		got := map[string]bool{}
		for _, id := range slices.Concat(doc.NodeIDs, acked, intended) {
			got[id] = true
		}
		if stored := ids(m.stored[d]); !maps.Equal(got, stored) {
			m.fatalf("after %s the manifest records %d node ids of %s (%d committed, %d acknowledged, %d intended), the store holds %d, %d of them recorded",
				what, len(got), d, len(doc.NodeIDs), len(acked), len(intended), len(stored), countIn(stored, got))
		}
	}
}

func countIn(a, b map[string]bool) int {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return n
}

// checkFailed checks the dead-letter table (`sluice failed list --json`)
// and the manifest (checkManifest) after a command that ingested the
// documents ingested.
func (m *model) checkFailed(what string, ingested map[string]bool) {
	m.t.Helper()
	m.checkManifest(what, ingested)
	stdout, stderr, code := m.sluice(m.work, "failed", "list", "--json")
	if code != exitOK {
		m.fatalf("failed list: exit %d: %s", code, stderr)
	}
	got := []string{}
	for _, l := range jsonLines(m.t, stdout) {
		got = append(got, fmt.Sprint(l["path"]))
	}
	slices.Sort(got)
	if want := slices.Sorted(maps.Keys(m.failed)); !slices.Equal(got, want) {
		m.fatalf("after %s `failed list` lists %q, want %q", what, got, want)
	}
}

// checkReport checks a report's counts against p.
func (m *model) checkReport(what string, rep *modelReport, p *prediction, dry bool) {
	m.t.Helper()
	var bad []string
	check := func(name string, got, want int) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s %d, want %d", name, got, want))
		}
	}
	check("files_seen", rep.FilesSeen, p.seen)
	check("files_failed", rep.FilesFailed, len(p.failures))
	if got := rep.failures(); !slices.Equal(got, p.failures) {
		bad = append(bad, fmt.Sprintf("failures %q, want %q", got, p.failures))
	}
	check("files_ingested+files_unchanged", rep.FilesIngested+rep.FilesUnchanged, p.ingestable)
	// After an interrupted run, a store found empty is store_lost if
	// that run recorded the ids it was about to write (maybe stored, for
	// state.Store.HasNodes), even if it wrote none of them. What counts
	// is the store as the command found it (p.emptyStart), not m.stored:
	// the model's store is that of before the interrupted run, and
	// checkStore has already replaced it with the store after the
	// command.
	if rep.StoreLost != p.storeLost && !(p.loose && p.emptyStart) {
		bad = append(bad, fmt.Sprintf("store_lost %v, want %v", rep.StoreLost, p.storeLost))
	}
	if !p.loose {
		check("files_deleted", rep.FilesDeleted, p.deleted)
		if rep.FilesIngested < p.changed {
			bad = append(bad, fmt.Sprintf("files_ingested %d, want at least the %d whose nodes change", rep.FilesIngested, p.changed))
		}
	}
	if p.exact && !p.loose {
		written := rep.ChunksWritten
		if dry {
			written = rep.ChunksPlanned
			check("chunks_written", rep.ChunksWritten, 0)
		}
		check("chunks written", written, p.chunksWritten)
		check("chunks_deleted", rep.ChunksDeleted, p.chunksDeleted)
	}
	if (rep.TokensEmbedded > 0) != (rep.ChunksWritten > 0) {
		bad = append(bad, fmt.Sprintf("tokens_embedded %d with chunks_written %d", rep.TokensEmbedded, rep.ChunksWritten))
	}
	if p.missing+p.extras > 0 {
		if rep.Verify == nil {
			bad = append(bad, "no verify report")
		} else {
			check("verify.nodes_missing", rep.Verify.NodesMissing, p.missing)
			check("verify.nodes_unlisted", rep.Verify.NodesUnlisted, p.extras)
		}
	}
	if len(bad) > 0 {
		m.fatalf("%s reports %s", what, strings.Join(bad, "; "))
	}
}

// Commands.

// run runs `sluice run` with c's flags and checks the store, the
// dead-letter table and the report; after a plain run, a second one must
// find nothing to do.
func (m *model) run(c runChoice) {
	m.t.Helper()
	m.runAfter(c, false, false)
}

// runAfter is run; after an interrupted run, the report's counts of work
// done are not checked, as that run may have done part of it; after a lost
// store, the report must say store_lost.
func (m *model) runAfter(c runChoice, interrupted, storeLost bool) {
	m.t.Helper()
	what := "sluice " + strings.Join(c.args(), " ")
	m.logf("%s", what)
	m.count(strings.Join(c.args(), " "))
	clean, cleanRep := m.clean(c)
	p := m.predictWalk(c, clean)
	p.loose, p.storeLost = interrupted, storeLost
	if c.verify {
		p.missing, p.extras = m.lost, m.foreign
	}
	if got := cleanRep.failures(); !slices.Equal(got, p.failures) {
		m.fatalf("the clean run failed %q; the model expects %q to fail", got, p.failures)
	}
	start := m.readStore(m.work)
	p.emptyStart = len(start) == 0
	rep := m.runReport(m.work, c.args()...)
	if c.dryRun {
		m.checkReport(what, rep, p, true)
		m.checkStore(what, m.stored)
		m.checkFailed(what, nil)
		return
	}
	if interrupted {
		m.before = start
	}
	m.checkStore(what, p.want)
	m.before = nil
	m.checkReport(what, rep, p, false)
	m.failed, m.unknown, m.found = p.failed, p.unknown, p.found
	m.lost, m.foreign = 0, 0
	m.checkFailed(what, p.ingested)
	if !c.plain() {
		return
	}
	// Nothing changed: the same run has nothing to do.
	again := m.runReport(m.work, "run")
	p = m.predictWalk(c, clean)
	if p.changed != 0 || p.chunksWritten != 0 || p.chunksDeleted != 0 || p.deleted != 0 {
		m.fatalf("the model predicts work for a second run: %+v", p)
	}
	m.checkReport(what+" again", again, p, false)
	if again.FilesIngested != 0 || again.FilesUnchanged != p.ingestable {
		m.fatalf("a second run right after the first ingested %d documents and found %d unchanged; want 0 and %d", again.FilesIngested, again.FilesUnchanged, p.ingestable)
	}
	m.checkStore(what+" again", p.want)
	m.checkFailed(what+" again", p.ingested)
}

// retry runs `sluice failed retry`.
func (m *model) retry() {
	m.t.Helper()
	what := "sluice failed retry"
	m.count("failed retry")
	m.logf("%s %q", what, slices.Sorted(maps.Keys(m.failed)))
	clean, _ := m.clean(runChoice{})
	p := m.predictRetry(clean)
	if p.seen > 0 && p.ingestable == 0 && !slices.ContainsFunc(p.failures, m.exists) {
		// None of the files to retry is in the folder: the retry takes
		// it for the wrong folder and refuses to start (exit 2).
		if _, stderr, code := m.sluice(m.work, "failed", "retry"); code != exitUsage {
			m.fatalf("%s of files that are all gone: exit %d, want 2: %s", what, code, stderr)
		}
		m.checkStore(what, m.stored)
		m.checkFailed(what, nil)
		return
	}
	rep := m.runReport(m.work, "failed", "retry")
	m.checkStore(what, p.want)
	m.checkReport(what, rep, p, false)
	m.failed, m.unknown, m.found = p.failed, p.unknown, p.found
	m.checkFailed(what, p.ingested)
}

// deleteDoc runs `sluice delete --doc-id` on a document of the store, a
// failed one, or one the store does not hold.
func (m *model) deleteDoc() {
	m.t.Helper()
	var id string
	switch docs := slices.Sorted(maps.Keys(m.stored)); {
	case len(docs) > 0 && m.rng.IntN(4) > 0:
		id = docs[m.rng.IntN(len(docs))]
	case len(m.failed) > 0 && m.rng.IntN(2) == 0:
		fs := slices.Sorted(maps.Keys(m.failed))
		id = fs[m.rng.IntN(len(fs))]
	default:
		id = m.newName()
	}
	m.logf("sluice delete --doc-id %s", id)
	m.count("delete")
	_, stderr, code := m.sluice(m.work, "delete", "--doc-id", id)
	if _, err := os.Stat(filepath.Join(m.work, "index.db")); errors.Is(err, os.ErrNotExist) {
		// Before the first run: there is no store to delete from.
		if code != exitFatal {
			m.fatalf("delete --doc-id %s before the first run: exit %d, want 1: %s", id, code, stderr)
		}
		return
	}
	if code != exitOK {
		m.fatalf("delete --doc-id %s: exit %d: %s", id, code, stderr)
	}
	want := maps.Clone(m.stored)
	delete(want, id)
	m.checkStore("delete", want)
	delete(m.failed, id)
	delete(m.unknown, id)
	delete(m.found, id)
	m.checkFailed("delete", nil)
}

// loseManifest deletes the state file: the manifest forgets every
// document, and the dead-letter table is empty.
func (m *model) loseManifest() {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(m.work, "state.db"+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.t.Fatal(err)
		}
	}
	for d := range m.stored {
		m.unknown[d] = true
	}
	clear(m.found)
	clear(m.failed)
	m.logf("state file deleted")
	m.count("state lost")
}

// tamper deletes chunks from the store and writes one there behind the
// manifest's back, for `run --verify` to repair.
func (m *model) tamper() {
	m.t.Helper()
	cfg := m.selection(runChoice{})
	st, err := local.Open(context.Background(), local.Config{Path: filepath.Join(m.work, "index.db")})
	if err != nil {
		m.t.Fatal(err)
	}
	defer st.Close()
	var lost []string
	for _, d := range slices.Sorted(maps.Keys(m.stored)) {
		body, ok := m.files[d]
		if !ok || !cfg.Match(d) || modelFails(body) || m.unknown[d] || m.found[d] || m.rng.IntN(3) > 0 {
			continue
		}
		for _, n := range m.stored[d] {
			if m.rng.IntN(3) == 0 {
				lost = append(lost, n.ID)
			}
		}
		if m.rng.IntN(3) == 0 {
			vec := make([]float32, modelDims)
			vec[m.n%modelDims] = 1
			n := sink.Node{ID: fmt.Sprintf("foreign-%d-%d", m.n, m.foreign), RefDocID: d, Text: "A chunk written behind the manifest's back.", Embedding: vec}
			if _, err := st.Add(context.Background(), []sink.Node{n}); err != nil {
				m.t.Fatal(err)
			}
			m.foreign++
			m.logf("foreign chunk written for %s", d)
		}
	}
	if err := st.DeleteNodes(context.Background(), lost); err != nil {
		m.t.Fatal(err)
	}
	m.lost += len(lost)
	m.logf("%d chunks deleted behind the manifest's back", len(lost))
	m.count("tamper")
	if err := st.Close(); err != nil {
		m.t.Fatal(err)
	}
	m.stored = m.readStore(m.work)
}

// interrupt changes valid files (and maybe the splitter or metadata
// settings), interrupts a plain run after a few embedding batches, maybe
// puts the files and settings back as they were (a branch switched back),
// and checks that the next plain run converges on what the model expects
// without the interrupted run. The files that fail are left alone, so
// that they are the same before, during and after the interrupted run,
// and so are the include and exclude settings: a document that only the
// interrupted run selected would stay in the store, as documented.
func (m *model) interrupt() {
	m.t.Helper()
	files, set := maps.Clone(m.files), m.set
	for range 1 + m.rng.IntN(3) {
		m.editValid()
	}
	if m.rng.IntN(2) == 0 {
		switch m.rng.IntN(3) {
		case 0:
			s := modelSplits[m.rng.IntN(len(modelSplits))]
			m.set.chunkSize, m.set.chunkOverlap = s[0], s[1]
		case 1:
			m.set.metadata = modelMetadata[m.rng.IntN(len(modelMetadata))]
		default:
			m.set.excludeFileMetadata = modelFileKeys[m.rng.IntN(len(modelFileKeys))]
		}
		m.logf("settings for the interrupted run: %+v", m.set)
	}
	batches := 1 + m.rng.IntN(10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelAfter{batches: batches, cancel: cancel}
	var stdout bytes.Buffer
	args := []string{"run", "--debug", "--json", "--config", m.config(m.work), "--env-file", os.DevNull}
	code := execute(ctx, args, &stdout, stderr)
	m.logf("sluice run interrupted after %d embedding batches: exit %d", batches, code)
	if code == exitFatal {
		m.interrupted++
	}
	if code != exitFatal && code != exitOK && code != exitPartial {
		m.fatalf("interrupted run: exit %d: %s", code, stdout.String())
	}
	if code == exitFatal && ctx.Err() == nil {
		m.fatalf("run failed before it was interrupted: %s", stdout.String())
	}
	if m.rng.IntN(2) == 0 {
		for id := range m.files {
			if _, ok := files[id]; !ok {
				m.remove(id)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(files)) {
			if body, ok := m.files[id]; !ok || body != files[id] {
				m.write(id, files[id])
			}
		}
		m.set = set
		m.logf("files and settings put back")
	}
	m.runAfter(runChoice{}, true, false)
}

// editValid makes one change to the folder that leaves every file that
// fails as it is and creates none. It also leaves alone the files of the
// dead-letter table, valid or not: an entry goes away when a run over the
// whole folder finds its file gone (README, Dead letters), so an
// interrupted run that completes after such a file was deleted or renamed
// clears an entry that putting the file back does not bring back (one a
// narrower source.include kept, the file having become valid since).
// The files it creates, or renames to, name no document of the store or
// of the dead-letter table either (unusedName).
func (m *model) editValid() {
	var valid []string
	for _, id := range slices.Sorted(maps.Keys(m.files)) {
		if !modelFails(m.files[id]) && !m.failed[id] {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 || m.rng.IntN(6) == 0 {
		id := m.unusedName()
		m.write(id, m.body())
		m.logf("create %s", id)
		return
	}
	id := valid[m.rng.IntN(len(valid))]
	body := m.files[id]
	switch m.rng.IntN(5) {
	case 0:
		at := m.cut(body)
		m.write(id, body[:at]+m.text(1+m.rng.IntN(3))+body[at:])
		m.logf("insert into %s at %d", id, at)
	case 1:
		m.write(id, body+m.text(1+m.rng.IntN(5)))
		m.logf("append to %s", id)
	case 2:
		m.remove(id)
		m.logf("delete %s", id)
	case 3:
		to := m.unusedName()
		m.write(to, body)
		m.remove(id)
		m.logf("rename %s to %s", id, to)
	default:
		m.write(id, m.body())
		m.logf("replace %s", id)
	}
}

// unusedName returns a new name (newName) of no document the store holds
// or the dead-letter table lists. A document whose file is gone may stay
// in the store: one a lost state file left unknown to the manifest, which
// a plain run does not remove (README, A lost manifest). A file created
// under its name before an interrupted run that completes is ingested as
// a new document, which replaces those nodes; the file put back (gone
// again), the next run removes the document, where the model, not knowing
// what the interrupted run did, expects the earlier nodes to stay.
func (m *model) unusedName() string {
	for {
		id := m.newName()
		if _, stored := m.stored[id]; !stored && !m.failed[id] {
			return id
		}
	}
}

// cancelAfter is the standard error of a run with --debug that it
// interrupts, as a kill would, once the run has logged batches embedding
// batches: the batches embedded last are not written yet.
type cancelAfter struct {
	mu      sync.Mutex
	batches int
	cancel  context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.batches -= bytes.Count(p, []byte(`msg="embedding batch"`)); w.batches <= 0 {
		w.cancel()
	}
	return len(p), nil
}

// indexDelete runs `sluice index delete`: the store is gone, and so are
// the manifest's records of it, dead letters included.
func (m *model) indexDelete() {
	m.t.Helper()
	m.logf("sluice index delete")
	m.count("index delete")
	_, stderr, code := m.sluice(m.work, "index", "delete")
	if code != exitOK {
		if _, err := os.Stat(filepath.Join(m.work, "index.db")); errors.Is(err, os.ErrNotExist) && code == exitFatal {
			return // no store yet
		}
		m.fatalf("index delete: exit %d: %s", code, stderr)
	}
	m.checkStore("index delete", nil)
	clear(m.unknown)
	clear(m.found)
	clear(m.failed)
	m.checkFailed("index delete", nil)
}

// canLoseStore reports whether every document of the store is one the
// next plain run reads and ingests: then a lost store (loseStore) is
// written whole again by that run, and the model need not follow records
// of nodes the store no longer holds. (A document that fails has no
// record unless the store holds nodes of it.)
func (m *model) canLoseStore() bool {
	cfg := m.selection(runChoice{})
	if len(m.stored) == 0 || len(m.unknown) > 0 || len(m.found) > 0 {
		return false
	}
	for d := range m.stored {
		body, ok := m.files[d]
		if !ok || !cfg.Match(d) || modelFails(body) {
			return false
		}
	}
	return true
}

// loseStore deletes the store's file behind the manifest's back, as when
// an index is deleted in the portal and created again empty.
func (m *model) loseStore() {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(m.work, "index.db"+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.t.Fatal(err)
		}
	}
	clear(m.stored)
	m.logf("store deleted")
	m.count("store lost")
}
