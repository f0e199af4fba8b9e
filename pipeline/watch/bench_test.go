package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkSaveToQueryable measures the time from a file's save to its
// chunks being in the store (the round that ingested it has completed),
// with the default debounce (500ms) and the local hash embedder. It makes
// 200 edits, one every 50ms, spread over 20 files so that each file is
// saved once a second, and reports the p50, p95 and max latency. Set
// SLUICE_BENCH_CORPUS to N to add N untouched files to the watched folder
// (each round's cost grows with the manifest's size).
//
//	go test -run '^$' -bench SaveToQueryable ./pipeline/watch/
func BenchmarkSaveToQueryable(b *testing.B) {
	const files, edits, every = 20, 200, 50 * time.Millisecond
	corpus := 0
	if s := os.Getenv("SLUICE_BENCH_CORPUS"); s != "" {
		var err error
		if corpus, err = strconv.Atoi(s); err != nil {
			b.Fatalf("SLUICE_BENCH_CORPUS=%q: %v", s, err)
		}
	}
	var lat []time.Duration
	for range b.N {
		lat = append(lat, saveToQueryable(b, files, edits, every, corpus)...)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Milliseconds()) }
	b.ReportMetric(q(0.50), "p50_ms")
	b.ReportMetric(q(0.95), "p95_ms")
	b.ReportMetric(q(1), "max_ms")
	b.ReportMetric(float64(len(lat)), "edits")
	b.ReportMetric(float64(corpus+files), "files")
}

func saveToQueryable(b *testing.B, files, edits int, every time.Duration, corpus int) []time.Duration {
	b.StopTimer()
	e := newEnv(b)
	defer e.close()
	e.cfg = Config{} // the defaults: debounce 500ms
	name := func(i int) string { return fmt.Sprintf("dir%d/doc%02d.md", i%4, i%files) }
	for i := range files {
		writeBench(b, e, name(i), "Initial text of document "+strconv.Itoa(i)+".")
	}
	for i := range corpus {
		writeBench(b, e, fmt.Sprintf("corpus/c%03d/f%06d.md", i%500, i), "Corpus file "+strconv.Itoa(i)+".")
	}
	var (
		mu     sync.Mutex
		saved  = map[string][]time.Time{} // unacknowledged saves per document
		lat    []time.Duration
		allIn  = make(chan struct{})
		closed bool
	)
	e.start(func(o *Options) {
		o.OnRound = func(r Round) {
			e.log.add(r)
			mu.Lock()
			defer mu.Unlock()
			for _, id := range r.Changed {
				var keep []time.Time
				for _, at := range saved[id] {
					if at.Before(r.Start) {
						lat = append(lat, r.End.Sub(at))
					} else {
						keep = append(keep, at)
					}
				}
				saved[id] = keep
			}
			if len(lat) == edits && !closed {
				closed = true
				close(allIn)
			}
		}
	})
	e.log.limit = 10 * time.Minute
	e.waitReady()
	b.StartTimer()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := range edits {
		<-tick.C
		id := name(i)
		mu.Lock()
		writeBench(b, e, id, fmt.Sprintf("Edit %d of %s. The text changes every time: %d.", i, id, i*7919))
		saved[id] = append(saved[id], time.Now())
		mu.Unlock()
	}
	select {
	case <-allIn:
	case <-time.After(time.Minute):
		b.Fatalf("only %d of %d edits became queryable", len(lat), edits)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	return lat
}

// BenchmarkIdleCPU measures the CPU the loop uses while nothing changes,
// with 50,000 watched files in 500 folders (after the initial
// reconciliation has ingested them), over a 5-second window. Set
// SLUICE_BENCH_FILES to change the number of files.
//
//	go test -run '^$' -bench IdleCPU -benchtime 1x ./pipeline/watch/
func BenchmarkIdleCPU(b *testing.B) {
	n := 50000
	if s := os.Getenv("SLUICE_BENCH_FILES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("SLUICE_BENCH_FILES=%q: %v", s, err)
		}
	}
	const window = 5 * time.Second
	cpuTime(b) // skips before the setup where the CPU time cannot be measured
	e := newEnv(b)
	for i := range n {
		writeBench(b, e, fmt.Sprintf("d%03d/f%05d.md", i%500, i), "File "+strconv.Itoa(i)+".")
	}
	ready := make(chan struct{})
	var once sync.Once
	start := time.Now()
	e.start(func(o *Options) {
		o.OnRound = func(r Round) {
			if r.Kind == Initial {
				once.Do(func() { close(ready) })
			}
		}
	})
	select {
	case <-ready:
	case <-time.After(10 * time.Minute):
		b.Fatal("the initial reconciliation did not finish")
	}
	initial := time.Since(start)
	var pct float64
	for b.Loop() {
		runtime.GC()
		before, t0 := cpuTime(b), time.Now()
		time.Sleep(window) // the measurement window: nothing happens on purpose
		pct = float64(cpuTime(b)-before) / float64(time.Since(t0)) * 100
	}
	b.ReportMetric(pct, "idle_cpu_%")
	b.ReportMetric(initial.Seconds(), "initial_s")
	b.ReportMetric(float64(n), "files")
}

func writeBench(b *testing.B, e *env, name, body string) {
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBurst writes 100,000 new files into a watched folder as fast as
// it can and reports the peak Go heap until the store holds all of them,
// and how long that took. The pending set is capped (Config.MaxPending), so
// the burst turns into full reconciliations instead of a growing queue.
// Set SLUICE_BENCH_FILES to change the number of files.
//
//	go test -run '^$' -bench Burst -benchtime 1x ./pipeline/watch/
func BenchmarkBurst(b *testing.B) {
	n := 100000
	if s := os.Getenv("SLUICE_BENCH_FILES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("SLUICE_BENCH_FILES=%q: %v", s, err)
		}
	}
	var peak uint64
	var took time.Duration
	for range b.N {
		e := newEnv(b)
		e.start(nil)
		e.log.limit = 30 * time.Minute
		e.waitReady()
		runtime.GC()
		stop := samplePeakHeap(&peak)
		start := time.Now()
		for i := range n {
			writeBench(b, e, fmt.Sprintf("d%03d/f%06d.md", i%1000, i), "Burst file "+strconv.Itoa(i)+".")
		}
		e.wait()
		took = time.Since(start)
		stop()
		ids, err := e.state.DocIDs(context.Background())
		if err != nil || len(ids) != n {
			b.Fatalf("the manifest holds %d documents (%v), want %d", len(ids), err, n)
		}
		e.close()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
	b.ReportMetric(took.Seconds(), "converge_s")
	b.ReportMetric(float64(n), "files")
}

// samplePeakHeap records the largest heap in use into *peak every 20ms
// until the returned stop is called; stop waits for the sampler.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
