package bench

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
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
	// chartFailedPad is how far below 0, as a share of the range above it,
	// the y axis starts when failed configurations are marked on the zero
	// line, so that their marks are drawn whole.
	chartFailedPad = 0.04
)

// Chart layout: a margin around everything, and the legend in a column of
// its own right of the plot, so that it hides no line or marker.
const (
	chartMargin    = 6   // points, on every side
	chartLegendGap = 12  // points between the plot and the legend
	chartTextSlack = 1.2 // room for a viewer's font wider than the one measured
	chartYTicks    = 6   // about how many intervals the throughput axis has
)

// WriteChart draws throughput (tokens per second, labelled like the table:
// 50k, 1.5M) against batch size, on a logarithmic axis, one line per
// concurrency, and writes it in format ("svg" or "png"). Throttled
// configurations (any HTTP 429) are marked by a red cross, the winner by a
// ring (labelled "best so far" for an interrupted benchmark, see
// Interrupted), and the token quota, when known, by a dashed line. A
// configuration that could not be measured is marked on the zero line at
// its batch size (its error is in the table), apart from the lines. The
// legend stands right of the plot.
func WriteChart(w io.Writer, results []Result, format string, opts ...RenderOption) error {
	o := renderOpts(results, opts)
	byConc := map[int]plotter.XYs{}
	var throttled, failed plotter.XYs
	for _, r := range results {
		if r.Error != "" {
			failed = append(failed, plotter.XY{X: float64(r.BatchSize), Y: 0})
			continue
		}
		byConc[r.Concurrency] = append(byConc[r.Concurrency], plotter.XY{X: float64(r.BatchSize), Y: r.TokensPerS})
		if r.HTTP429 > 0 {
			throttled = append(throttled, plotter.XY{X: float64(r.BatchSize), Y: r.TokensPerS})
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
	p.X.Label.Text = "batch size (chunks per request, log scale)"
	p.Y.Label.Text = "tokens per second"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks
	p.Y.Tick.Marker = rateTicks{}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(4) // entries are otherwise closer than their font's height

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
		legend.Add(fmt.Sprintf("concurrency %d", c), line, points)
	}
	if q := quota(results); q > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: xMin, Y: q}, {X: xMax, Y: q}})
		if err != nil {
			return fmt.Errorf("bench: charting the quota: %w", err)
		}
		line.Color = color.Gray{Y: 96}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		legend.Add("token quota", line)
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
		legend.Add("throttled (HTTP 429)", mark)
	}
	if len(failed) > 0 {
		mark, err := plotter.NewScatter(failed)
		if err != nil {
			return fmt.Errorf("bench: charting the failed configurations: %w", err)
		}
		mark.Color = color.Gray{Y: 64}
		mark.Shape = draw.BoxGlyph{}
		mark.Radius = vg.Points(4)
		p.Add(mark)
		legend.Add("failed (error in the table)", mark)
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
		legend.Add(fmt.Sprintf("%s (%s)", label, r.Trial()), mark)
	}
	if o.interrupted {
		p.Title.Text += fmt.Sprintf(" (interrupted after %d of %d configurations)", len(results), o.planned)
	}
	// Set last: Add widens the range to the data, and a single batch size
	// would leave a zero-width range that plot widens by ±1, to 0 for size 1,
	// which a log scale cannot draw.
	p.X.Min, p.X.Max = xMin, xMax
	p.Y.Min, p.Y.Max = 0, yMax
	if len(failed) > 0 {
		p.Y.Min = -chartFailedPad * yMax
	}
	c, err := draw.NewFormattedCanvas(chartWidth, chartHeight, format)
	if err != nil {
		return fmt.Errorf("bench: chart format %q: %w", format, err)
	}
	plotArea, legendArea := chartLayout(draw.New(c), p, &legend)
	p.Draw(plotArea)
	legend.Draw(legendArea)
	_, err = c.WriteTo(w)
	return err
}

// chartLayout splits the canvas c, within a margin, into the plot's area
// and, right of it, the legend's column, as wide as its longest entry (with
// room for a wider font), its top level with the top of the plot's data.
func chartLayout(c draw.Canvas, p *plot.Plot, legend *plot.Legend) (plotArea, legendArea draw.Canvas) {
	c = draw.Crop(c, chartMargin, -chartMargin, chartMargin, -chartMargin)
	width := vg.Length(float64(legend.Rectangle(c).Size().X) * chartTextSlack)
	plotArea = draw.Crop(c, 0, -(width + chartLegendGap), 0, 0)
	legendArea = draw.Crop(c, c.Size().X-width, 0, 0, 0)
	if p.Title.Text != "" {
		legendArea = draw.Crop(legendArea, 0, 0, 0, -(p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding))
	}
	return plotArea, legendArea
}

// rateTicks marks the throughput axis at round values (steps of 1, 2, 2.5
// or 5 times a power of ten, about chartYTicks of them), labelled in the
// table's units: 0, 2.5k, 5k, 7.5k; 0, 50k, 100k; 0, 500k, 1M, 1.5M.
type rateTicks struct{}

// Ticks returns the ticks from min to max.
func (rateTicks) Ticks(min, max float64) []plot.Tick {
	step := niceStep((max - min) / chartYTicks)
	var ticks []plot.Tick
	for i := math.Ceil(min / step); i*step <= max*(1+1e-9); i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0, from a range starting below 0: labelled "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: rateLabel(v)})
	}
	return ticks
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten
// that is at least raw (1 for raw <= 0).
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsInf(raw, 0) || math.IsNaN(raw) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// rateLabel formats a tick of the throughput axis: 750, 2.5k, 50k, 1.5M.
func rateLabel(v float64) string {
	f := func(x float64, unit string) string {
		return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64) + unit
	}
	switch a := math.Abs(v); {
	case a >= 1e6:
		return f(v/1e6, "M")
	case a >= 1e3:
		return f(v/1e3, "k")
	}
	return f(v, "")
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

// batchTicks labels the x axis at each batch size tried, measured or not.
func batchTicks(results []Result) plot.ConstantTicks {
	var sizes []int
	for _, r := range results {
		sizes = append(sizes, r.BatchSize)
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
