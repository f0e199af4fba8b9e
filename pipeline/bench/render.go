package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// tableHeader are the columns of WriteTable.
var tableHeader = []string{"batch", "conc", "chunks/req", "chunks/s", "tokens/s", "tpm used", "429", "retries", "p50 ms", "p95 ms", "rss MB"}

// WriteTable writes results as a table of right-aligned columns with the
// winner marked by "*", followed by the recommendation line.
func WriteTable(w io.Writer, results []Result) error {
	win := Pick(results)
	rows := [][]string{tableHeader}
	notes := []string{""}
	for i, r := range results {
		note := ""
		switch {
		case r.Error != "":
			note = "error: " + r.Error
		case i == win:
			note = "*"
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
	b.WriteString("recommended: " + Recommendation(results) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func utilization(u *float64) string {
	if u == nil {
		return "-"
	}
	return strconv.FormatFloat(100**u, 'f', 1, 64) + "%"
}

// WriteJSON writes one JSON object per result, one per line.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// csvHeader are the CSV columns: the JSON keys, in the same order.
var csvHeader = []string{
	"batch_size", "concurrency", "chunks_per_s", "tokens_per_s", "tpm_utilization", "http_429",
	"retries", "p50_ms", "p95_ms", "peak_rss_mb", "requests", "chunks_per_request", "seconds", "winner", "error",
}

// WriteCSV writes results as CSV with a header row; the columns are the
// JSON keys plus winner (true for the recommended row). An absent quota
// utilisation is an empty cell.
func WriteCSV(w io.Writer, results []Result) error {
	win := Pick(results)
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
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
