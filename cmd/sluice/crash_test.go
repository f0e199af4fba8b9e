package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/embedder/embedtest"
	"github.com/sluice-dev/sluice/pipeline/state"
	"github.com/sluice-dev/sluice/sink"
	"github.com/sluice-dev/sluice/sink/local"
)

// cliChildEnv, when set to 1 in the environment of this package's test
// binary, makes TestMain run the command line given as the binary's
// arguments instead of the tests. Tests re-execute their own binary this way
// to run `sluice` as a separate process, which they can kill, without a
// separate build. So does a first argument that is not a flag (go test
// passes only -test.* flags): the binary was started as `sluice`, such as
// by `sluice bench`, which runs each configuration in a process of its own
// (os.Executable: this binary under test). Running the tests there instead
// would start the same benchmark again in every child, without end.
// Otherwise TestMain runs the tests and checks that they leave no
// goroutine running.
const cliChildEnv = "SLUICE_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliChildEnv) == "1" || len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// The locks of Cloud AI Search indexes are in the user's cache folder:
	// the tests', and their children's, in a temporary one.
	cache, err := os.MkdirTemp("", "sluice-cli-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(cache)
		os.Exit(code)
	}))
}

// Crash test settings. The manifest records node ids before they are
// written and acknowledges them after, and embeddings are journalled in the
// state file as soon as they arrive, until their document commits. So a
// kill loses only the embedding requests in flight (at most
// embedder.concurrency × embedder.batchSize chunks, and none once answered),
// and leaves no node the next run does not know about. With 2 × 4 chunks of
// at most 128 tokens, 20 kills cost at most 20k tokens, 8% of this corpus's
// 250k: the 10% bound holds by construction, whatever the machine's speed.
const (
	crashFiles      = 300 // documents in the corpus
	crashMinBytes   = 1 << 10
	crashMaxBytes   = 8 << 10
	crashKills      = 20 // kills that must land while `sluice run` is running
	crashMaxRuns    = 3 * crashKills
	crashOverhead   = 0.10 // allowed tokens above one clean run, as a fraction
	crashSeed       = 6    // seeds the corpus and the kill schedule
	crashChunkSize  = 128
	crashBatchSize  = 4
	crashConcurrent = 2
	crashModel      = "crash-test-model"
	crashKeyEnv     = "SLUICE_CRASH_TEST_KEY"
	crashKey        = "crash-test-key" // not a secret: the test server's key
	crashDims       = 64
)

// TestKilledRunsConverge is issue 6's crash test. It kills `sluice run` (this
// test binary re-executed as the CLI, with an OpenAI-compatible provider
// pointed at an in-process embeddings server) at seeded random moments, at
// least crashKills times, then lets one run finish. The store must then hold
// exactly what a clean run's store holds — node ids, reference documents,
// texts, offsets, metadata and vectors — and the tokens the server embedded
// over all the runs must stay within crashOverhead of one clean run's.
func TestKilledRunsConverge(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs `sluice run` a few dozen times as a subprocess")
	}
	start := time.Now()
	work := t.TempDir()
	corpus := filepath.Join(work, "corpus")
	writeCrashCorpus(t, corpus, crashFiles, crashSeed)
	srv := startCrashServer(t)
	clean := newCrashTarget(t, work, "clean", srv.url)
	crashed := newCrashTarget(t, work, "crashed", srv.url)

	ref := clean.run(t, srv, corpus, nil)
	if ref.exit != exitOK {
		t.Fatalf("clean run: exit %d\n%s", ref.exit, ref.stderr)
	}
	cleanTokens := srv.tokens()
	if cleanTokens == 0 || ref.firstRequest == 0 {
		t.Fatalf("clean run embedded nothing (%d tokens served)\n%s", cleanTokens, ref.stderr)
	}
	embedding := ref.elapsed - ref.firstRequest
	t.Logf("clean run: %d tokens, %.2fs (first embedding request after %.2fs)", cleanTokens, ref.elapsed.Seconds(), ref.firstRequest.Seconds())

	// A quarter of the kills land before the first embedding request (walk,
	// prescan, manifest reads), the others during embedding and writing.
	// Each embedding-phase kill lets the run work for a random part of a
	// twelfth of the clean run's embedding time, so that the kills, not the
	// final run, do most of the work.
	rng := rand.New(rand.NewPCG(crashSeed, 2))
	var kills, early, finished, unlistedKills int
	var lost waste
	storedBefore, _ := crashed.inspect(t)
	for run := 0; kills < crashKills; run++ {
		if run == crashMaxRuns {
			t.Fatalf("only %d of %d runs were killed before they finished; the kill schedule does not fit this machine", kills, run)
		}
		var plan killPlan
		if rng.IntN(4) == 0 {
			plan = killPlan{delay: randDuration(rng, ref.firstRequest)}
		} else {
			plan = killPlan{afterFirstRequest: true, delay: randDuration(rng, embedding/12)}
		}
		servedBefore := srv.inputs()
		res := crashed.run(t, srv, corpus, &plan)
		stored, unlisted := crashed.inspect(t)
		added := stored - storedBefore
		storedBefore = stored
		switch {
		case !res.killed && res.exit != exitOK:
			t.Fatalf("run %d finished with exit %d before its kill\n%s", run, res.exit, res.stderr)
		case !res.killed:
			finished++
			continue
		case res.firstRequest == 0:
			early++
		}
		kills++
		lost.served += srv.inputs() - servedBefore
		lost.stored += int64(added)
		if unlisted > 0 {
			// Such nodes would stay in the store as stale chunks if their
			// document changed before the next run.
			unlistedKills++
			t.Errorf("kill %d (%v into the run) left %d stored nodes that the manifest does not list", kills, plan.delay, unlisted)
		}
	}
	final := crashed.run(t, srv, corpus, nil)
	if final.exit != exitOK {
		t.Fatalf("final run: exit %d\n%s", final.exit, final.stderr)
	}
	total := srv.tokens() - cleanTokens
	overhead := float64(total-cleanTokens) / float64(cleanTokens)
	t.Logf("%d kills (%d before the first embedding request), %d runs finished before their kill, %d kills left unlisted nodes", kills, early, finished, unlistedKills)
	t.Logf("killed runs: %d chunks embedded, %d new nodes stored; %d chunks lost to the kills, %.1f per kill (at most %d: embedder.concurrency × embedder.batchSize)",
		lost.served, lost.stored, lost.served-lost.stored, float64(lost.served-lost.stored)/float64(kills), crashConcurrent*crashBatchSize)
	t.Logf("tokens embedded: clean run %d; killed runs plus final run %d: overhead %+.2f%% (limit %.0f%%); test took %.1fs",
		cleanTokens, total, 100*overhead, 100*crashOverhead, time.Since(start).Seconds())

	assertSameNodes(t, clean.nodes(t), crashed.nodes(t))
	crashed.assertNoPending(t)
	if overhead > crashOverhead {
		t.Errorf("killed runs and the final run embedded %d tokens, %.1f%% above one clean run's %d; the limit is %.0f%%",
			total, 100*overhead, cleanTokens, 100*crashOverhead)
	}
}

func randDuration(rng *rand.Rand, upTo time.Duration) time.Duration {
	if upTo <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(upTo)))
}

// writeCrashCorpus writes n documents of varied sizes, paragraphs and
// folders under root, the same for the same seed. Some documents share a
// boilerplate paragraph, and some repeat one, so identical chunks occur
// within and across documents.
func writeCrashCorpus(t *testing.T, root string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields(`sluice river water gate flow batch token vector index store chunk overlap
		sentence paragraph document folder manifest embed model quota retry backoff limiter worker
		channel budget memory stream split merge search query filter metadata node record crash kill
		resume converge clean run tokens seconds bytes files report harbour pelican quartz meadow
		lantern copper violet granite orchard compass velvet thunder maple silver canyon ember`)
	boiler := sentences(rand.New(rand.NewPCG(seed, 9)), words, 5)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		size := crashMinBytes + rng.IntN(crashMaxBytes-crashMinBytes)
		var repeat string
		for b.Len() < size {
			p := sentences(rng, words, 2+rng.IntN(7))
			switch {
			case i%5 == 0 && rng.IntN(6) == 0:
				p = boiler
			case i%7 == 0 && repeat != "" && rng.IntN(5) == 0:
				p = repeat
			case repeat == "":
				repeat = p
			}
			b.WriteString(p)
			b.WriteString("\n\n")
		}
		ext := ".md"
		if i%4 == 3 {
			ext = ".txt"
		}
		p := filepath.Join(root, fmt.Sprintf("part%d", i%6), fmt.Sprintf("doc%03d%s", i, ext))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sentences(rng *rand.Rand, words []string, n int) string {
	var b strings.Builder
	for s := range n {
		if s > 0 {
			b.WriteByte(' ')
		}
		k := 6 + rng.IntN(15)
		for w := range k {
			word := words[rng.IntN(len(words))]
			if w == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(word)
		}
		b.WriteString([]string{".", ".", ".", "?", "!"}[rng.IntN(5)])
	}
	return b.String()
}

// crashServer is an embedtest server that also tells when the next request
// arrives, so that a kill can be timed from the start of embedding.
type crashServer struct {
	emb *embedtest.Server
	url string

	mu   sync.Mutex
	next chan struct{} // closed by the next request; nil when nobody waits
}

func startCrashServer(t *testing.T) *crashServer {
	s := &crashServer{emb: embedtest.NewHandler(embedtest.Options{Key: crashKey, Model: crashModel, Dimensions: crashDims})}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.emb.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	s.url = hs.URL
	return s
}

func (s *crashServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.next != nil {
		close(s.next)
		s.next = nil
	}
	s.mu.Unlock()
	s.emb.ServeHTTP(w, r)
}

// nextRequest returns a channel closed when the next request arrives.
func (s *crashServer) nextRequest() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = make(chan struct{})
	return s.next
}

// inputs returns the texts the server has embedded so far.
func (s *crashServer) inputs() int64 { return s.emb.Stats().InputsServed }

// tokens returns the tokens the server has embedded so far, whether or not
// the client lived to store them.
func (s *crashServer) tokens() int64 { return s.emb.Stats().TokensServed }

// crashTarget is a configuration with its own store and manifest.
type crashTarget struct {
	dir, config string
	cfg         Config
}

func newCrashTarget(t *testing.T, work, name, serverURL string) *crashTarget {
	t.Helper()
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`source: {include: ["**/*.md", "**/*.txt"]}
splitter: {chunkSize: %d, chunkOverlap: 16}
embedder:
  provider: openai
  baseURL: %s/v1
  model: %s
  apiKeyEnv: %s
  dimensions: %d
  batchSize: %d
  concurrency: %d
sink: {type: local, local: {path: %s}}
state: {path: %s}
`, crashChunkSize, serverURL, crashModel, crashKeyEnv, crashDims, crashBatchSize, crashConcurrent,
		filepath.Join(dir, "index.db"), filepath.Join(dir, "state.db"))
	ct := &crashTarget{dir: dir, config: filepath.Join(dir, "sluice.yaml")}
	if err := os.WriteFile(ct.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := loadConfig(ct.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("crash test config: %v", err)
	}
	ct.cfg = cfg
	return ct
}

// waste accounts for the chunks embedded by killed runs.
type waste struct {
	served int64 // chunks the server embedded for killed runs
	stored int64 // nodes the killed runs added to the store
}

// killPlan says when to kill a run: delay after the process starts, or
// after the first embedding request it sends.
type killPlan struct {
	afterFirstRequest bool
	delay             time.Duration
}

// runResult is the outcome of one `sluice run` process.
type runResult struct {
	killed       bool
	exit         int
	elapsed      time.Duration // from start to exit or kill
	firstRequest time.Duration // from start to the first embedding request; 0 if none
	stderr       string
}

// run runs `sluice run corpus` as a child process and, with a plan, kills
// it with SIGKILL at the planned moment unless it has finished by then.
func (ct *crashTarget) run(t *testing.T, srv *crashServer, corpus string, plan *killPlan) runResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	report := filepath.Join(ct.dir, "report.json")
	cmd := exec.CommandContext(ctx, exe, "run", corpus, "--config", ct.config, "--json", "--report", report)
	cmd.Dir = ct.dir
	cmd.Env = append(os.Environ(), cliChildEnv+"=1", crashKeyEnv+"="+crashKey)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr

	first := srv.nextRequest()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var res runResult
	var kill <-chan time.Time
	if plan != nil && !plan.afterFirstRequest {
		kill = time.After(plan.delay)
	}
	var waitErr error
wait:
	for {
		select {
		case <-first:
			first = nil
			res.firstRequest = time.Since(start)
			if plan != nil && plan.afterFirstRequest {
				kill = time.After(plan.delay)
			}
		case <-kill:
			kill = nil
			res.killed = cmd.Process.Kill() == nil
		case waitErr = <-done:
			break wait
		}
	}
	res.elapsed = time.Since(start)
	res.stderr = stderr.String()
	if strings.Contains(res.stderr, "DATA RACE") {
		t.Fatalf("sluice run reported a data race:\n%s", res.stderr)
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		res.killed = false // it finished before the signal
	case errors.As(waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			if ctx.Err() != nil {
				t.Fatalf("sluice run did not finish within the time limit\n%s", res.stderr)
			}
			res.killed = true
		} else {
			res.killed = false
			res.exit = exitErr.ExitCode()
		}
	default:
		t.Fatalf("sluice run: %v", waitErr)
	}
	return res
}

// nodes returns every node of the target's store.
func (ct *crashTarget) nodes(t *testing.T) []sink.Node {
	t.Helper()
	st, err := local.Open(t.Context(), ct.cfg.Sink.Local)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	nodes, err := st.GetNodes(t.Context(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// openState opens the target's manifest, in the scope the CLI uses.
func (ct *crashTarget) openState(t *testing.T) *state.Store {
	t.Helper()
	st, err := state.Open(t.Context(), ct.cfg.State.Path, sinkScope(ct.cfg))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// inspect returns the number of nodes in the target's store and how many
// of them neither a manifest record nor the pending table lists. A later
// run cannot know the unlisted ones: if their document changed before that
// run, they would stay in the store as stale chunks.
func (ct *crashTarget) inspect(t *testing.T) (stored, unlisted int) {
	t.Helper()
	nodes := ct.nodes(t)
	st := ct.openState(t)
	defer st.Close()
	known := map[string]map[string]bool{}
	for _, node := range nodes {
		ids, ok := known[node.RefDocID]
		if !ok {
			ids = map[string]bool{}
			doc, _, err := st.Doc(t.Context(), node.RefDocID)
			if err != nil {
				t.Fatal(err)
			}
			acked, intended, err := st.Pending(t.Context(), node.RefDocID)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range slices.Concat(doc.NodeIDs, acked, intended) {
				ids[id] = true
			}
			known[node.RefDocID] = ids
		}
		if !ids[node.ID] {
			unlisted++
		}
	}
	return len(nodes), unlisted
}

// assertNoPending checks that the finished runs left no pending chunk ids
// and no dead-letter entries.
func (ct *crashTarget) assertNoPending(t *testing.T) {
	t.Helper()
	st := ct.openState(t)
	defer st.Close()
	ids, err := st.DocIDs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != crashFiles {
		t.Errorf("manifest lists %d documents, want %d", len(ids), crashFiles)
	}
	for _, id := range ids {
		acked, intended, err := st.Pending(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(acked) + len(intended); n > 0 {
			t.Errorf("%s still has %d pending node ids after a complete run", id, n)
		}
	}
	failures, err := st.Failures(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(failures) > 0 {
		t.Errorf("dead-letter table lists %d documents, first %s: %s", len(failures), failures[0].ID, failures[0].Reason)
	}
}

// assertSameNodes compares two stores node by node: ids, reference
// documents, texts, offsets, metadata and vectors.
func assertSameNodes(t *testing.T, want, got []sink.Node) {
	t.Helper()
	index := func(ns []sink.Node) map[string]sink.Node {
		m := make(map[string]sink.Node, len(ns))
		for _, n := range ns {
			m[n.ID] = n
		}
		return m
	}
	w, g := index(want), index(got)
	var missing, extra, differ []string
	for id, wn := range w {
		gn, ok := g[id]
		switch {
		case !ok:
			missing = append(missing, wn.RefDocID+" "+id)
		case gn.RefDocID != wn.RefDocID, gn.Text != wn.Text, gn.StartChar != wn.StartChar, gn.EndChar != wn.EndChar,
			!reflect.DeepEqual(gn.Metadata, wn.Metadata), !slices.Equal(gn.Embedding, wn.Embedding):
			differ = append(differ, wn.RefDocID+" "+id)
		}
	}
	for id, gn := range g {
		if _, ok := w[id]; !ok {
			extra = append(extra, gn.RefDocID+" "+id)
		}
	}
	if len(want) == 0 {
		t.Fatal("the clean store is empty")
	}
	if len(missing)+len(extra)+len(differ) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		slices.Sort(differ)
		t.Errorf("store after the kills differs from a clean run's (%d nodes vs %d): %d missing %v, %d extra %v, %d different %v",
			len(got), len(want), len(missing), head(missing), len(extra), head(extra), len(differ), head(differ))
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }
