package bench

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart size.
const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 5 * vg.Inch
)

// Chart padding: the plot range reaches this far beyond the data, so that
// no marker (the winner's ring is the largest) is cut by the plot border.
const (
	chartPadX = 1.3  // factor beyond the smallest and largest batch size (log axis)
	chartPadY = 1.12 // factor above the highest throughput or quota
)

// WriteChart draws throughput (tokens per second) against batch size, on a
// logarithmic axis, one line per concurrency, and writes it in format
// ("svg" or "png"). Throttled configurations (any HTTP 429) are marked by a
// red cross, the winner by a ring (labelled "best so far" for an
// interrupted benchmark, see Interrupted), and the token quota, when known,
// by a dashed line. Failed trials are left out.
func WriteChart(w io.Writer, results []Result, format string, opts ...RenderOption) error {
	o := renderOpts(results, opts)
	byConc := map[int]plotter.XYs{}
	var throttled plotter.XYs
	for _, r := range results {
		if r.Error == "" {
			byConc[r.Concurrency] = append(byConc[r.Concurrency], plotter.XY{X: float64(r.BatchSize), Y: r.TokensPerS})
			if r.HTTP429 > 0 {
				throttled = append(throttled, plotter.XY{X: float64(r.BatchSize), Y: r.TokensPerS})
			}
		}
	}
	if len(byConc) == 0 {
		return fmt.Errorf("bench: no successful trial to chart")
	}
	ticks := batchTicks(results)
	xMin, xMax, yMax, err := chartRange(results, ticks)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = "Embedding throughput by batch size"
	p.X.Label.Text = "batch size (chunks per request)"
	p.Y.Label.Text = "tokens per second"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks
	p.Legend.Left = false // bottom right, below lines that rise with batch size
	p.Add(plotter.NewGrid())

	concs := make([]int, 0, len(byConc))
	for c := range byConc {
		concs = append(concs, c)
	}
	slices.Sort(concs)
	for i, c := range concs {
		pts := byConc[c]
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("bench: charting concurrency %d: %w", c, err)
		}
		col := plotutil.Color(i)
		line.Color, points.Color = col, col
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("concurrency %d", c), line, points)
	}
	if q := quota(results); q > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: xMin, Y: q}, {X: xMax, Y: q}})
		if err != nil {
			return fmt.Errorf("bench: charting the quota: %w", err)
		}
		line.Color = color.Gray{Y: 96}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		p.Legend.Add("token quota", line)
	}
	if len(throttled) > 0 {
		mark, err := plotter.NewScatter(throttled)
		if err != nil {
			return fmt.Errorf("bench: charting the throttled configurations: %w", err)
		}
		mark.Color = color.RGBA{R: 200, A: 255}
		mark.Shape = draw.CrossGlyph{}
		mark.Radius = vg.Points(5)
		p.Add(mark)
		p.Legend.Add("throttled (HTTP 429)", mark)
	}
	label := "recommended"
	if o.interrupted {
		label = "best so far" // see Interrupted: no winner, the best is still marked
	}
	if win := Pick(results); win >= 0 {
		r := results[win]
		mark, err := plotter.NewScatter(plotter.XYs{{X: float64(r.BatchSize), Y: r.TokensPerS}})
		if err != nil {
			return fmt.Errorf("bench: charting the winner: %w", err)
		}
		mark.Color = color.Black
		mark.Shape = draw.RingGlyph{}
		mark.Radius = vg.Points(6)
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("%s (%s)", label, r.Trial()), mark)
	}
	if o.interrupted {
		p.Title.Text += fmt.Sprintf(" (interrupted after %d of %d configurations)", len(results), o.planned)
	}
	// Set last: Add widens the range to the data, and a single batch size
	// would leave a zero-width range that plot widens by ±1, to 0 for size 1,
	// which a log scale cannot draw.
	p.X.Min, p.X.Max = xMin, xMax
	p.Y.Min, p.Y.Max = 0, yMax
	wt, err := p.WriterTo(chartWidth, chartHeight, format)
	if err != nil {
		return fmt.Errorf("bench: chart format %q: %w", format, err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// chartRange returns the plot range: x from below the smallest batch size
// to beyond the largest (see batchRange), y from 0 to above the highest
// throughput and the quota, so that every marker is drawn whole.
func chartRange(results []Result, ticks plot.ConstantTicks) (xMin, xMax, yMax float64, err error) {
	xMin, xMax, err = batchRange(ticks)
	if err != nil {
		return 0, 0, 0, err
	}
	top := quota(results)
	for _, r := range results {
		if r.Error == "" {
			top = max(top, r.TokensPerS)
		}
	}
	if top <= 0 {
		top = 1 // nothing measured: any range will do
	}
	return xMin, xMax, top * chartPadY, nil
}

// batchTicks labels the x axis at each batch size tried.
func batchTicks(results []Result) plot.ConstantTicks {
	var sizes []int
	for _, r := range results {
		if r.Error == "" {
			sizes = append(sizes, r.BatchSize)
		}
	}
	slices.Sort(sizes)
	ticks := make(plot.ConstantTicks, 0, len(sizes))
	for _, s := range slices.Compact(sizes) {
		ticks = append(ticks, plot.Tick{Value: float64(s), Label: strconv.Itoa(s)})
	}
	return ticks
}

// batchRange returns the x axis range for the batch sizes ticks (sorted,
// not empty): from the smallest divided by chartPadX to the largest times
// chartPadX, so that the markers at either end are not cut, or, for a
// single size, from half of it to twice it, so that the point sits in the
// middle of a log axis that starts above 0.
func batchRange(ticks plot.ConstantTicks) (lo, hi float64, err error) {
	lo, hi = ticks[0].Value, ticks[len(ticks)-1].Value
	if lo <= 0 {
		return 0, 0, fmt.Errorf("bench: batch size %v cannot be charted on a log axis; batch sizes must be 1 or more", lo)
	}
	if lo == hi {
		return lo / 2, hi * 2, nil
	}
	return lo / chartPadX, hi * chartPadX, nil
}

// quota returns the tokens-per-second quota implied by the results, or 0.
func quota(results []Result) float64 {
	for _, r := range results {
		if r.Error == "" && r.TPMUtilization != nil && *r.TPMUtilization > 0 {
			return r.TokensPerS / *r.TPMUtilization
		}
	}
	return 0
}
