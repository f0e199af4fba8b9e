package bench_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/testenv"
	"github.com/sluice-dev/sluice/pipeline/bench"
)

// sample are fixed results: a quota, a throttled row and a failed row.
func sample() []bench.Result {
	u := func(v float64) *float64 { return &v }
	return []bench.Result{
		{BatchSize: 8, Concurrency: 1, ChunksPerS: 10.5, TokensPerS: 5376, TPMUtilization: u(0.3226), P50Ms: 95.5, P95Ms: 120.25, PeakRSSMB: 41.2, Requests: 40, ChunksPerRequest: 8, Seconds: 5},
		{BatchSize: 64, Concurrency: 1, ChunksPerS: 31.25, TokensPerS: 16000, TPMUtilization: u(0.96), Retries: 1, P50Ms: 410, P95Ms: 470.5, PeakRSSMB: 44, Requests: 25, ChunksPerRequest: 62.5, Seconds: 5},
		{BatchSize: 8, Concurrency: 4, ChunksPerS: 31.6, TokensPerS: 16179.2, TPMUtilization: u(0.9708), HTTP429: 4, Retries: 4, P50Ms: 99, P95Ms: 130, PeakRSSMB: 43.5, Requests: 160, ChunksPerRequest: 8, Seconds: 5},
		{BatchSize: 64, Concurrency: 4, Error: "bench: trial 64x4: embedder: embedder.batchSize: too large"},
	}
}

// TestRender checks the table, JSON lines and CSV of finished and of
// interrupted benchmarks against golden files: an interrupted one has no
// winner ("*", winner true) and no "recommended:" line, but a best so far
// and the count of configurations measured, and partial true in JSON and
// CSV.
func TestRender(t *testing.T) {
	interrupted := bench.Interrupted(7)
	tests := []struct {
		golden string
		write  func(io.Writer, []bench.Result, ...bench.RenderOption) error
		opts   []bench.RenderOption
	}{
		{"table.golden", bench.WriteTable, nil},
		{"results.jsonl.golden", bench.WriteJSON, nil},
		{"results.csv.golden", bench.WriteCSV, nil},
		{"table-interrupted.golden", bench.WriteTable, []bench.RenderOption{interrupted}},
		{"results-interrupted.jsonl.golden", bench.WriteJSON, []bench.RenderOption{interrupted}},
		{"results-interrupted.csv.golden", bench.WriteCSV, []bench.RenderOption{interrupted}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf, sample(), tt.opts...); err != nil {
				t.Fatal(err)
			}
			testenv.Golden(t, filepath.Join("testdata", tt.golden), buf.Bytes())
		})
	}
}

// TestWinnerColumns checks that the JSON lines' winner key marks the same
// configuration as the CSV's winner column and the table's "*": the one
// Pick chooses, and none when the benchmark was interrupted.
func TestWinnerColumns(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []bench.RenderOption
		want int
	}{
		{"finished", nil, bench.Pick(sample())},
		{"interrupted", []bench.RenderOption{bench.Interrupted(10)}, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var j, c, tab bytes.Buffer
			if err := bench.WriteJSON(&j, sample(), tt.opts...); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteCSV(&c, sample(), tt.opts...); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteTable(&tab, sample(), tt.opts...); err != nil {
				t.Fatal(err)
			}
			var jsonWin, csvWin, tableWin []int
			for i, line := range strings.Split(strings.TrimSpace(j.String()), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				if w, ok := m["winner"].(bool); !ok {
					t.Fatalf("line %d lacks a boolean winner: %s", i, line)
				} else if w {
					jsonWin = append(jsonWin, i)
				}
				if p, _ := m["partial"].(bool); p != (tt.opts != nil) {
					t.Errorf("line %d: partial = %v, want %v", i, m["partial"], tt.opts != nil)
				}
			}
			rows, err := csv.NewReader(&c).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := slices.Index(rows[0], "winner")
			for i, row := range rows[1:] {
				if row[col] == "true" {
					csvWin = append(csvWin, i)
				}
			}
			for i, line := range strings.Split(tab.String(), "\n")[1:] {
				if strings.HasSuffix(line, "  *") {
					tableWin = append(tableWin, i)
				}
			}
			want := []int{tt.want}
			if tt.want < 0 {
				want = nil
			}
			if !slices.Equal(jsonWin, want) || !slices.Equal(csvWin, want) || !slices.Equal(tableWin, want) {
				t.Errorf("winners: JSON %v, CSV %v, table %v; want %v in each", jsonWin, csvWin, tableWin, want)
			}
		})
	}
}

func TestJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := bench.WriteJSON(&buf, sample()[:1]); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"batch_size", "concurrency", "chunks_per_s", "tokens_per_s", "tpm_utilization", "http_429", "retries", "p50_ms", "p95_ms", "peak_rss_mb"} {
		if !strings.Contains(buf.String(), `"`+key+`":`) {
			t.Errorf("JSON line %s lacks the contract key %q", buf.String(), key)
		}
	}
}

func TestWriteChart(t *testing.T) {
	tests := []struct {
		format string
		magic  string
	}{
		{"svg", "<svg"},
		{"png", "\x89PNG"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := bench.WriteChart(&buf, sample(), tt.format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(buf.Bytes()[:min(buf.Len(), 512)], []byte(tt.magic)) {
				t.Fatalf("chart does not start like %s: %q", tt.format, buf.Bytes()[:min(buf.Len(), 64)])
			}
			if tt.format == "svg" {
				for _, text := range []string{"concurrency 1", "concurrency 4", "recommended (64x1)", "tokens per second", "token quota", "throttled (HTTP 429)", "failed (error in the table)"} {
					if !strings.Contains(buf.String(), text) {
						t.Errorf("SVG lacks %q", text)
					}
				}
			}
		})
	}
	// Without a throttled result there is no throttled legend entry.
	var buf bytes.Buffer
	if err := bench.WriteChart(&buf, sample()[:2], "svg"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "throttled") || strings.Contains(buf.String(), "failed") {
		t.Error("SVG of unthrottled results, all measured, has a throttled or failed legend entry")
	}
	// An interrupted benchmark has a best so far, not a recommendation.
	buf.Reset()
	if err := bench.WriteChart(&buf, sample(), "svg", bench.Interrupted(9)); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"best so far (64x1)", "interrupted after 4 of 9 configurations"} {
		if !strings.Contains(buf.String(), text) {
			t.Errorf("SVG of an interrupted benchmark lacks %q", text)
		}
	}
	if strings.Contains(buf.String(), "recommended") {
		t.Error("SVG of an interrupted benchmark recommends")
	}
	if err := bench.WriteChart(&bytes.Buffer{}, sample()[3:], "svg"); err == nil {
		t.Error("WriteChart with only failed trials returned nil, want an error")
	}
}

// TestWriteChartBatchSizes draws charts whose x axis (log scale) spans a
// single batch size, 1 included, or several: each must render without a
// panic into a well-formed SVG or a decodable PNG.
func TestWriteChartBatchSizes(t *testing.T) {
	results := func(sizes []int, quota bool) []bench.Result {
		var rs []bench.Result
		for _, c := range []int{1, 4} {
			for _, s := range sizes {
				r := bench.Result{BatchSize: s, Concurrency: c, ChunksPerS: float64(s * c), TokensPerS: float64(100 * s * c), Requests: 10, Seconds: 1}
				if quota {
					u := r.TokensPerS / 10000
					r.TPMUtilization = &u
				}
				rs = append(rs, r)
			}
		}
		return rs
	}
	tests := []struct {
		name  string
		sizes []int
		quota bool
	}{
		{"single size 1", []int{1}, false},
		{"single size 1 with quota", []int{1}, true},
		{"single size 8", []int{8}, false},
		{"single size 8 with quota", []int{8}, true},
		{"sizes 1 and 8", []int{1, 8}, false},
		{"sizes 1 and 8 with quota", []int{1, 8}, true},
	}
	for _, tt := range tests {
		for _, format := range []string{"svg", "png"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				func() {
					defer func() {
						if v := recover(); v != nil {
							t.Fatalf("WriteChart panicked: %v", v)
						}
					}()
					if err := bench.WriteChart(&buf, results(tt.sizes, tt.quota), format); err != nil {
						t.Fatalf("WriteChart: %v", err)
					}
				}()
				if buf.Len() == 0 {
					t.Fatal("WriteChart wrote nothing")
				}
				switch format {
				case "png":
					if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
						t.Fatalf("PNG header missing: %q", buf.Bytes()[:min(buf.Len(), 16)])
					}
					img, err := png.Decode(bytes.NewReader(buf.Bytes()))
					if err != nil {
						t.Fatalf("PNG does not decode: %v", err)
					}
					if b := img.Bounds(); b.Dx() == 0 || b.Dy() == 0 {
						t.Errorf("PNG is %v", b)
					}
				case "svg":
					svg := buf.String()
					if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg[:min(len(svg), 512)], "<svg") {
						t.Fatalf("SVG header missing: %q", svg[:min(len(svg), 128)])
					}
					if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
						t.Errorf("SVG holds non-finite coordinates")
					}
					dec := xml.NewDecoder(strings.NewReader(svg))
					for {
						if _, err := dec.Token(); err == io.EOF {
							break
						} else if err != nil {
							t.Fatalf("SVG is not well-formed XML: %v", err)
						}
					}
					want := []string{"concurrency 1", "concurrency 4", "batch size"}
					if tt.quota {
						want = append(want, "token quota")
					}
					for _, s := range tt.sizes {
						want = append(want, ">"+strconv.Itoa(s)+"</text>") // the tick label
					}
					for _, text := range want {
						if !strings.Contains(svg, text) {
							t.Errorf("SVG lacks %q", text)
						}
					}
				}
			})
		}
	}
	// A batch size a log axis cannot show is an error, not a panic.
	if err := bench.WriteChart(&bytes.Buffer{}, results([]int{0}, false), "svg"); err == nil {
		t.Error("WriteChart with batch size 0 returned nil, want an error")
	}
}

// svgText is a text element of an SVG chart: its position and content.
type svgText struct {
	x, y float64
	size float64 // font size, px
	text string
}

// svgTexts returns the text elements of an SVG written by WriteChart.
func svgTexts(t *testing.T, svg string) []svgText {
	t.Helper()
	var texts []svgText
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "text" {
			continue
		}
		var st svgText
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "x":
				st.x, _ = strconv.ParseFloat(a.Value, 64)
			case "y":
				st.y, _ = strconv.ParseFloat(a.Value, 64)
			case "style":
				if _, size, ok := strings.Cut(a.Value, "font-size:"); ok {
					st.size, _ = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(size, ";"), "px"), 64)
				}
			}
		}
		var body string
		if err := dec.DecodeElement(&body, &se); err != nil {
			t.Fatalf("SVG text: %v", err)
		}
		st.text = body
		texts = append(texts, st)
	}
}

// TestWriteChartReadable checks what a reader of the chart needs: the
// throughput axis labelled at round values in the table's units (0, 50k,
// 100k, ...), not at two values such as "0.00" and "250000.00" (the
// audit's chart of a run reaching 229k tokens/s); and the legend beside
// the plot, right of the largest batch size's tick label, with its entries
// a line apart: drawn over the plot's bottom right corner, where the lines
// of throughput rising with batch size end, it hid them, and its 12px
// entries, 10px apart, overlapped one another.
func TestWriteChartReadable(t *testing.T) {
	u := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		results []bench.Result
		yLabels []string
	}{
		{"request quota", []bench.Result{
			{BatchSize: 1, Concurrency: 1, TokensPerS: 1431, Requests: 10},
			{BatchSize: 256, Concurrency: 1, TokensPerS: 81396, Requests: 10},
			{BatchSize: 1, Concurrency: 4, TokensPerS: 1390, Requests: 10},
			{BatchSize: 256, Concurrency: 4, TokensPerS: 229447, Requests: 10},
		}, []string{"0", "50k", "100k", "150k", "200k"}},
		{"token quota", []bench.Result{
			{BatchSize: 8, Concurrency: 1, TokensPerS: 16500, TPMUtilization: u(0.99), Requests: 20},
			{BatchSize: 32, Concurrency: 1, TokensPerS: 16600, TPMUtilization: u(0.996), Requests: 20},
			{BatchSize: 256, Concurrency: 16, TokensPerS: 16650, TPMUtilization: u(0.999), Requests: 20},
		}, []string{"0", "5k", "10k", "15k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := bench.WriteChart(&buf, tt.results, "svg"); err != nil {
				t.Fatal(err)
			}
			texts := svgTexts(t, buf.String())
			has := map[string]svgText{}
			for _, st := range texts {
				has[st.text] = st
			}
			for _, l := range tt.yLabels {
				if _, ok := has[l]; !ok {
					t.Errorf("the throughput axis lacks the label %q; the chart's texts: %v", l, texts)
				}
			}
			rightmost := 0.0 // of the batch size tick labels
			for _, r := range tt.results {
				if st, ok := has[strconv.Itoa(r.BatchSize)]; ok {
					rightmost = max(rightmost, st.x)
				}
			}
			var legend []svgText
			for _, st := range texts {
				if strings.HasPrefix(st.text, "concurrency ") || strings.HasPrefix(st.text, "recommended") || st.text == "token quota" {
					legend = append(legend, st)
				}
			}
			if len(legend) < 3 {
				t.Fatalf("the legend has %d entries, want at least 3: %v", len(legend), legend)
			}
			for i, st := range legend {
				if st.x <= rightmost {
					t.Errorf("legend entry %q starts at x %.1f, over the plot (the largest batch size's label is at %.1f)", st.text, st.x, rightmost)
				}
				if i > 0 {
					if gap := math.Abs(st.y - legend[i-1].y); gap < st.size {
						t.Errorf("legend entries %q and %q are %.1fpx apart, less than their %.0fpx font", legend[i-1].text, st.text, gap, st.size)
					}
				}
			}
		})
	}
}
