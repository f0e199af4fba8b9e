package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// RenderOption changes what WriteTable, WriteJSON, WriteCSV and WriteChart
// write.
type RenderOption func(*renderOptions)

type renderOptions struct {
	planned     int  // configurations the benchmark meant to measure
	interrupted bool // the benchmark stopped before measuring them all
}

// Interrupted marks the results as those of a benchmark that stopped
// (interrupted, say by Ctrl-C) before it measured all of its planned
// configurations. There is then no winner, only a best so far: the table
// ends with "interrupted after N of M configurations; best so far: ..."
// instead of the recommendation and marks the best row "best so far", the
// JSON lines and the CSV rows carry partial true and winner false, and the
// chart labels the best point "best so far".
func Interrupted(planned int) RenderOption {
	return func(o *renderOptions) { o.planned, o.interrupted = planned, true }
}

func renderOpts(results []Result, opts []RenderOption) renderOptions {
	o := renderOptions{planned: len(results)}
	for _, opt := range opts {
		opt(&o)
	}
	o.planned = max(o.planned, len(results))
	return o
}

// winner is the index of the winning result, or -1 when there is none:
// every trial failed, or the benchmark was interrupted.
func (o renderOptions) winner(results []Result) int {
	if o.interrupted {
		return -1
	}
	return Pick(results)
}

// tableHeader are the columns of WriteTable.
var tableHeader = []string{"batch", "conc", "chunks/req", "chunks/s", "tokens/s", "tpm used", "429", "retries", "p50 ms", "p95 ms", "rss MB"}

// WriteTable writes results as a table of right-aligned columns with the
// winner marked by "*", followed by the recommendation line (see
// Interrupted for results of a benchmark that did not finish).
func WriteTable(w io.Writer, results []Result, opts ...RenderOption) error {
	o := renderOpts(results, opts)
	win, best := o.winner(results), Pick(results)
	rows := [][]string{tableHeader}
	notes := []string{""}
	for i, r := range results {
		note := ""
		switch {
		case r.Error != "":
			note = "error: " + r.Reason()
		case i == win:
			note = "*"
		case o.interrupted && i == best:
			note = "best so far"
		}
		notes = append(notes, note)
		if r.Error != "" {
			rows = append(rows, []string{strconv.Itoa(r.BatchSize), strconv.Itoa(r.Concurrency), "-", "-", "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		rows = append(rows, []string{
			strconv.Itoa(r.BatchSize), strconv.Itoa(r.Concurrency), fmt.Sprintf("%.1f", r.ChunksPerRequest),
			fmt.Sprintf("%.1f", r.ChunksPerS), fmt.Sprintf("%.0f", r.TokensPerS), utilization(r.TPMUtilization),
			strconv.FormatInt(r.HTTP429, 10), strconv.FormatInt(r.Retries, 10),
			fmt.Sprintf("%.1f", r.P50Ms), fmt.Sprintf("%.1f", r.P95Ms), fmt.Sprintf("%.1f", r.PeakRSSMB),
		})
	}
	widths := make([]int, len(tableHeader))
	for _, row := range rows {
		for j, cell := range row {
			widths[j] = max(widths[j], len(cell))
		}
	}
	var b strings.Builder
	for i, row := range rows {
		for j, cell := range row {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", widths[j]-len(cell)))
			b.WriteString(cell)
		}
		if notes[i] != "" {
			b.WriteString("  " + notes[i])
		}
		b.WriteByte('\n')
	}
	if o.interrupted {
		fmt.Fprintf(&b, "interrupted after %d of %d configurations; best so far: %s\n", len(results), o.planned, describe(results, best))
	} else {
		b.WriteString("recommended: " + Recommendation(results) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func utilization(u *float64) string {
	if u == nil {
		return "-"
	}
	return strconv.FormatFloat(100**u, 'f', 1, 64) + "%"
}

// jsonLine is a line of WriteJSON: the result and whether it won.
type jsonLine struct {
	Result
	// Winner marks the recommended configuration, as the CSV's winner
	// column does; false on every line of an interrupted benchmark.
	Winner bool `json:"winner"`
	// Partial is true on every line of an interrupted benchmark (see
	// Interrupted); absent otherwise.
	Partial bool `json:"partial,omitempty"`
}

// failedLine is the line of WriteJSON for a trial that could not be
// measured: jsonLine's keys, in the same order, with null for each figure,
// as the table shows "-", so that no figure reads as a measured 0.
type failedLine struct {
	BatchSize        int       `json:"batch_size"`
	Concurrency      int       `json:"concurrency"`
	ChunksPerS       *struct{} `json:"chunks_per_s"`
	TokensPerS       *struct{} `json:"tokens_per_s"`
	TPMUtilization   *struct{} `json:"tpm_utilization"`
	HTTP429          *struct{} `json:"http_429"`
	Retries          *struct{} `json:"retries"`
	P50Ms            *struct{} `json:"p50_ms"`
	P95Ms            *struct{} `json:"p95_ms"`
	PeakRSSMB        *struct{} `json:"peak_rss_mb"`
	Requests         *struct{} `json:"requests"`
	ChunksPerRequest *struct{} `json:"chunks_per_request"`
	Seconds          *struct{} `json:"seconds"`
	Error            string    `json:"error"`
	Winner           bool      `json:"winner"`
	Partial          bool      `json:"partial,omitempty"`
}

// WriteJSON writes one JSON object per result, one per line: the keys of
// Result plus winner (true on the recommended configuration's line) and,
// for an interrupted benchmark (see Interrupted), partial. The figures of
// a trial that could not be measured (Result.Error) are null.
func WriteJSON(w io.Writer, results []Result, opts ...RenderOption) error {
	o := renderOpts(results, opts)
	win := o.winner(results)
	enc := json.NewEncoder(w)
	for i, r := range results {
		var line any = jsonLine{Result: r, Winner: i == win, Partial: o.interrupted}
		if r.Error != "" {
			line = failedLine{BatchSize: r.BatchSize, Concurrency: r.Concurrency, Error: r.Error, Winner: i == win, Partial: o.interrupted}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// csvHeader are the CSV columns: the JSON keys, in the same order, with
// winner before error, and partial last.
var csvHeader = []string{
	"batch_size", "concurrency", "chunks_per_s", "tokens_per_s", "tpm_utilization", "http_429",
	"retries", "p50_ms", "p95_ms", "peak_rss_mb", "requests", "chunks_per_request", "seconds", "winner", "error", "partial",
}

// csvFigures are the columns of csvHeader that hold measured figures,
// chunks_per_s to seconds: empty on the row of a trial that failed.
var csvFigures = struct{ first, end int }{slices.Index(csvHeader, "chunks_per_s"), slices.Index(csvHeader, "seconds") + 1}

// WriteCSV writes results as CSV with a header row; the columns are the
// JSON keys plus winner (true for the recommended row) and partial (true on
// every row of an interrupted benchmark, see Interrupted). An absent quota
// utilisation is an empty cell, as are the figures of a trial that could
// not be measured (Result.Error).
func WriteCSV(w io.Writer, results []Result, opts ...RenderOption) error {
	o := renderOpts(results, opts)
	win := o.winner(results)
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for i, r := range results {
		util := ""
		if r.TPMUtilization != nil {
			util = strconv.FormatFloat(*r.TPMUtilization, 'f', 4, 64)
		}
		rec := []string{
			strconv.Itoa(r.BatchSize), strconv.Itoa(r.Concurrency), f(r.ChunksPerS), f(r.TokensPerS), util,
			strconv.FormatInt(r.HTTP429, 10), strconv.FormatInt(r.Retries, 10), f(r.P50Ms), f(r.P95Ms),
			f(r.PeakRSSMB), strconv.FormatInt(r.Requests, 10), f(r.ChunksPerRequest), f(r.Seconds), strconv.FormatBool(i == win), r.Error,
			strconv.FormatBool(o.interrupted),
		}
		if r.Error != "" {
			clear(rec[csvFigures.first:csvFigures.end])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
