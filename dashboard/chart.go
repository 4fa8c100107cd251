package dashboard

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// The chart's drawing area, in SVG units; the axes' labels sit outside it.
const (
	chartW, chartH = 600.0, 120.0
	chartLeft      = 34.0 // room for the count labels
	chartBottom    = 30.0 // room for the time labels and the range
)

// tickSteps are the time axis' candidate intervals, shortest first.
var tickSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 7 * 24 * time.Hour}

// chart draws the node counts as a step chart, ready (solid) and desired
// (dashed): a count holds from its report until the next one, and the last
// until now, so that two sparse reports are not read as a gradual change.
// A time axis (ticks, times in UTC, the range) and a count axis make it
// readable without JavaScript or colour.
func chart(ps []point, now time.Time) template.HTML {
	if len(ps) < 1 {
		return ""
	}
	top := 1
	for _, p := range ps {
		top = max(top, p.Active, p.Desired)
	}
	t0, t1 := ps[0].At, now
	if t1.Before(ps[len(ps)-1].At) {
		t1 = ps[len(ps)-1].At
	}
	span := t1.Sub(t0)
	if span <= 0 {
		// One report just now: a short stretch to draw it on.
		span, t0 = time.Minute, t1.Add(-time.Minute)
	}
	x := func(t time.Time) float64 { return float64(t.Sub(t0)) / float64(span) * chartW }
	y := func(n int) float64 { return chartH - float64(n)/float64(top)*(chartH-10) }
	step := func(count func(point) int) string {
		var b strings.Builder
		for i, p := range ps {
			end := t1
			if i+1 < len(ps) {
				end = ps[i+1].At
			}
			fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", x(p.At), y(count(p)), x(end), y(count(p)))
		}
		return strings.TrimSpace(b.String())
	}
	last := ps[len(ps)-1]
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="%.0f -8 %.0f %.0f" role="img" aria-label="nodes over time from %s to %s: %d reports, now %d of %d ready">`,
		-chartLeft, chartW+chartLeft+10, chartH+chartBottom+8, stamp(t0, span), stamp(t1, span), len(ps), last.Active, last.Desired)
	fmt.Fprintf(&b, `<line class="axis" x1="0" y1="%.0f" x2="%.0f" y2="%.0f"/><line class="axis" x1="0" y1="0" x2="0" y2="%.0f"/>`, chartH, chartW, chartH, chartH)
	for _, n := range countTicks(top) {
		fmt.Fprintf(&b, `<line class="grid" x1="0" y1="%.1f" x2="%.0f" y2="%.1f"/><text class="count" x="-6" y="%.1f" text-anchor="end">%d</text>`,
			y(n), chartW, y(n), y(n)+3, n)
	}
	for _, t := range timeTicks(t0, t1) {
		fmt.Fprintf(&b, `<line class="tick" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f"/><text class="time" x="%.1f" y="%.0f" text-anchor="middle">%s</text>`,
			x(t), chartH, x(t), chartH+4, x(t), chartH+14, tickLabel(t, span))
	}
	fmt.Fprintf(&b, `<text class="range" x="0" y="%.0f">%s → %s UTC (%s)</text>`, chartH+27, stamp(t0, span), stamp(t1, span), span.Round(time.Second))
	fmt.Fprintf(&b, `<polyline class="desired" points="%s"/><polyline class="ready" points="%s"/></svg>`,
		step(func(p point) int { return p.Desired }), step(func(p point) int { return p.Active }))
	return template.HTML(b.String())
}

// countTicks are the count axis' labels: 0, top and up to three between,
// whole numbers only.
func countTicks(top int) []int {
	every := max(1, (top+3)/4)
	var out []int
	for n := 0; n < top; n += every {
		out = append(out, n)
	}
	return append(out, top)
}

// timeTicks are the round times between t0 and t1 (UTC), at the shortest
// interval that gives at most six intervals (seven ticks).
func timeTicks(t0, t1 time.Time) []time.Time {
	span := t1.Sub(t0)
	every := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 6 {
			every = s
			break
		}
	}
	var out []time.Time
	for t := t0.UTC().Truncate(every); !t.After(t1); t = t.Add(every) {
		if !t.Before(t0) {
			out = append(out, t)
		}
	}
	return out
}

// tickLabel is a tick's time, as precise as the chart's span needs.
func tickLabel(t time.Time, span time.Duration) string {
	switch {
	case span > 2*24*time.Hour:
		return t.UTC().Format("Jan 2")
	case span > 12*time.Hour:
		return t.UTC().Format("Jan 2 15:04")
	case span > 3*time.Minute:
		return t.UTC().Format("15:04")
	}
	return t.UTC().Format("15:04:05")
}

// stamp is one end of the chart's range.
func stamp(t time.Time, span time.Duration) string {
	if span > 12*time.Hour {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return t.UTC().Format("15:04:05")
}
