package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one line of the throughput plot: calls/s by concurrency.
type series struct {
	name   string
	points map[int]float64
}

// writePlot draws calls/s against concurrent callers for each series.
func writePlot(path string, all []series) error {
	p := plot.New()
	p.Title.Text = "toolnexus: calls/s by concurrent callers (loopback, same machine)"
	p.X.Label.Text = "concurrent callers"
	p.Y.Label.Text = "calls/s"
	p.Legend.Top = true
	p.Legend.Left = true
	var args []any
	for _, s := range all {
		var pts plotter.XYs
		for _, c := range []int{1, 16, 64} {
			if v, ok := s.points[c]; ok {
				pts = append(pts, plotter.XY{X: float64(c), Y: v})
			}
		}
		args = append(args, s.name, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
