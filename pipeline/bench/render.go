package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable writes results as an aligned table with the winner marked by
// "*", followed by the recommendation line.
func WriteTable(w io.Writer, results []Result) error {
	win := Pick(results)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\tconc\tchunks/s\ttokens/s\ttpm used\t429\tretries\tp50 ms\tp95 ms\trss MB\t\t")
	for i, r := range results {
		mark := ""
		if i == win {
			mark = "*"
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "%d\t%d\t-\t-\t-\t-\t-\t-\t-\t-\t\t error: %s\n", r.BatchSize, r.Concurrency, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t%.0f\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%s\t\n",
			r.BatchSize, r.Concurrency, r.ChunksPerS, r.TokensPerS, utilization(r.TPMUtilization),
			r.HTTP429, r.Retries, r.P50Ms, r.P95Ms, r.PeakRSSMB, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "recommended:", Recommendation(results))
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
	"retries", "p50_ms", "p95_ms", "peak_rss_mb", "requests", "seconds", "winner", "error",
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
			f(r.PeakRSSMB), strconv.FormatInt(r.Requests, 10), f(r.Seconds), strconv.FormatBool(i == win), r.Error,
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
