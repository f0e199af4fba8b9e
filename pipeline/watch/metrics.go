package watch

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-dev/sluice/embedder"
	"github.com/sluice-dev/sluice/pipeline"
)

// Metrics exposes a Loop's counters to Prometheus on a private registry:
// documents, chunks, tokens and bytes processed, embedding requests, 429s,
// retries and failures, queue depths, rounds and the time of the last
// successful sync, plus the Go runtime and process collectors.
type Metrics struct {
	reg *prometheus.Registry
	l   *Loop
}

// NewMetrics registers the metrics of l. The embedding counters come from
// the pipeline's embedder when it implements embedder.StatsReporter (the
// HTTP clients); otherwise requests are counted as batches sent and 429s,
// retries and failures stay 0.
func NewMetrics(l *Loop) *Metrics {
	reg := prometheus.NewRegistry()
	rep, _ := l.opts.Pipeline.Embedder.(embedder.StatsReporter)
	reg.MustRegister(
		&collector{l: l, emb: rep},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Metrics{reg: reg, l: l}
}

// Registry returns the private registry that Handler serves on /metrics.
// A program that embeds a Loop registers its own collectors on it to serve
// them on the same endpoint, or, to serve Sluice's series from a /metrics
// of its own, gathers it with its registry (prometheus.Gatherers).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves /metrics (Prometheus text format), /healthz (200 while the
// Loop follows its folder, 503 with the reason once its file watcher has
// stopped, a round failed for good or Run returned: see Loop.Healthy) and
// /readyz (200 once the initial reconciliation has completed, 503 before).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := m.l.Healthy(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("unhealthy: " + err.Error() + "\n"))
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !m.l.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("initial reconciliation in progress\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}

// metric describes one series the collector reports.
type metric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(c *collector, s sample) float64
}

// sample is one consistent read of every source, taken per scrape.
type sample struct {
	pipeline.Snapshot
	emb    embedder.Stats
	hasEmb bool
}

func newMetric(name, help string, kind prometheus.ValueType, value func(*collector, sample) float64) metric {
	return metric{desc: prometheus.NewDesc(name, help, nil, nil), kind: kind, value: value}
}

var metricList = []metric{
	newMetric("sluice_documents_processed_total", "Documents finished by the pipeline, ingested, unchanged or failed.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.FilesDone) }),
	newMetric("sluice_documents_failed_total", "Documents that failed (see `sluice failed list`).", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.FilesFailed) }),
	newMetric("sluice_documents_removed_total", "Documents removed from the index because their file is gone.", prometheus.CounterValue,
		func(c *collector, _ sample) float64 { return float64(c.l.removed.Load()) }),
	newMetric("sluice_chunks_processed_total", "Chunks written to the vector store: new ones with their embeddings, and reused ones whose metadata alone was rewritten.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.ChunksDone) }),
	newMetric("sluice_tokens_embedded_total", "Tokens sent to the embedder.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.Tokens) }),
	newMetric("sluice_bytes_read_total", "Source bytes read.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.BytesRead) }),
	newMetric("sluice_embedding_requests_total", "Embedding requests sent, retries included.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 {
			if s.hasEmb {
				return float64(s.emb.Requests)
			}
			return float64(s.Batches)
		}),
	newMetric("sluice_embedding_throttled_total", "Embedding requests answered 429 Too Many Requests.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.emb.Throttled) }),
	newMetric("sluice_embedding_retries_total", "Embedding requests that retried a failed one.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.emb.Retries) }),
	newMetric("sluice_embedding_failures_total", "Embedding requests that failed for good.", prometheus.CounterValue,
		func(_ *collector, s sample) float64 { return float64(s.emb.Failures) }),
	newMetric("sluice_watch_pending_documents", "Changed or removed documents waiting for a round, plus 1 while a full reconciliation is due (retries of a failed round included) or running.", prometheus.GaugeValue,
		func(c *collector, _ sample) float64 { return float64(c.l.Pending()) }),
	newMetric("sluice_watch_debouncing_documents", "Changed or removed documents inside their quiet period (watch.debounce), not yet waiting for a round.", prometheus.GaugeValue,
		func(c *collector, _ sample) float64 { return float64(c.l.Debouncing()) }),
	newMetric("sluice_pipeline_inflight_documents", "Documents taken by the pipeline and not yet finished.", prometheus.GaugeValue,
		func(c *collector, s sample) float64 { return float64(c.l.inflight(s.Snapshot)) }),
	newMetric("sluice_watch_unwatched_folders", "Folders not watched because the system's watch limit is reached (raise fs.inotify.max_user_watches); until they are, they are retried with a full reconciliation every minute (or watch.rescanInterval, if shorter).", prometheus.GaugeValue,
		func(c *collector, _ sample) float64 { return float64(c.l.Unwatched()) }),
	newMetric("sluice_watch_rounds_total", "Rounds completed, successful or not.", prometheus.CounterValue,
		func(c *collector, _ sample) float64 { return float64(c.l.rounds.Load()) }),
	newMetric("sluice_watch_rescans_total", "Full reconciliations, the initial one included.", prometheus.CounterValue,
		func(c *collector, _ sample) float64 { return float64(c.l.rescans.Load()) }),
	newMetric("sluice_watch_ready", "1 once the initial reconciliation has completed.", prometheus.GaugeValue,
		func(c *collector, _ sample) float64 {
			if c.l.Ready() {
				return 1
			}
			return 0
		}),
	newMetric("sluice_watch_last_sync_timestamp_seconds", "Unix time of the last round that completed without error (0: none yet).", prometheus.GaugeValue,
		func(c *collector, _ sample) float64 {
			if t := c.l.LastSync(); !t.IsZero() {
				return float64(t.UnixNano()) / 1e9
			}
			return 0
		}),
}

// collector reads the Loop's counters at scrape time, so nothing has to
// copy them in the background.
type collector struct {
	l   *Loop
	emb embedder.StatsReporter
}

// Describe sends the descriptors of every series.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metricList {
		ch <- m.desc
	}
}

// Collect reads every source once and sends the series.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := sample{Snapshot: c.l.Stats().Snapshot()}
	if c.emb != nil {
		s.emb, s.hasEmb = c.emb.Stats(), true
	}
	for _, m := range metricList {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(c, s))
	}
}
