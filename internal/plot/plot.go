// Package plot draws line charts as PNG images, for the figures the
// reliability suite writes under docs/ (latency over time, memory over
// time). It draws what those need and no more: one chart of several
// series over a shared x axis, with a title, axis labels, ticks and a
// legend, in Go's standard image packages and x/image's fixed font.
package plot

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Series is one line: its name in the legend and its points.
type Series struct {
	Name   string
	Points []Point
}

// Point is one (x, y).
type Point struct{ X, Y float64 }

// Chart is a line chart.
type Chart struct {
	Title          string
	XLabel, YLabel string
	Series         []Series
	Width, Height  int // pixels; 900 × 420 when 0
}

// palette colours the series in order (then again from the start).
var palette = []color.RGBA{
	{0x2f, 0x6f, 0xde, 0xff}, {0xd9, 0x48, 0x1c, 0xff}, {0x1a, 0x9e, 0x5a, 0xff},
	{0x8e, 0x44, 0xad, 0xff}, {0xc9, 0x9a, 0x06, 0xff}, {0x55, 0x55, 0x55, 0xff},
}

var (
	ink   = color.RGBA{0x1b, 0x1f, 0x24, 0xff}
	grid  = color.RGBA{0xe3, 0xe6, 0xea, 0xff}
	paper = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

// WritePNG draws c and writes it as a PNG image.
func (c *Chart) WritePNG(w io.Writer) error {
	width, height := c.Width, c.Height
	if width == 0 {
		width, height = 900, 420
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), &image.Uniform{paper}, image.Point{}, draw.Src)

	xmin, xmax, ymin, ymax := c.bounds()
	left, right, top, bottom := 70, width-20, 40, height-70
	px := func(x float64) int { return left + int(math.Round((x-xmin)/(xmax-xmin)*float64(right-left))) }
	py := func(y float64) int { return bottom - int(math.Round((y-ymin)/(ymax-ymin)*float64(bottom-top))) }

	text(img, c.Title, width/2-len(c.Title)*7/2, 22, ink)
	for _, t := range ticks(ymin, ymax) {
		y := py(t)
		line(img, left, y, right, y, grid)
		label := format(t)
		text(img, label, left-8-len(label)*7, y+4, ink)
	}
	for _, t := range ticks(xmin, xmax) {
		x := px(t)
		line(img, x, top, x, bottom, grid)
		label := format(t)
		text(img, label, x-len(label)*7/2, bottom+16, ink)
	}
	line(img, left, bottom, right, bottom, ink)
	line(img, left, top, left, bottom, ink)
	text(img, c.XLabel, (left+right)/2-len(c.XLabel)*7/2, bottom+34, ink)
	text(img, c.YLabel, 8, top-10, ink)

	lx := left
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		for j := 1; j < len(s.Points); j++ {
			a, b := s.Points[j-1], s.Points[j]
			thick(img, px(a.X), py(a.Y), px(b.X), py(b.Y), col)
		}
		if len(s.Points) == 1 {
			p := s.Points[0]
			thick(img, px(p.X), py(p.Y), px(p.X), py(p.Y), col)
		}
		// The legend, under the x axis's label.
		thick(img, lx, height-14, lx+18, height-14, col)
		text(img, s.Name, lx+24, height-10, ink)
		lx += 24 + len(s.Name)*7 + 20
	}
	return png.Encode(w, img)
}

// bounds are the axes' ranges: every point within, y from 0, neither
// range empty.
func (c *Chart) bounds() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
			ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymax = 0, 1, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax <= ymin {
		ymax = ymin + 1
	}
	step := niceCeil((ymax - ymin) / 5)
	ymax = math.Ceil(ymax*1.02/step) * step
	return xmin, xmax, ymin, ymax
}

// ticks are about five round values from lo to hi.
func ticks(lo, hi float64) []float64 {
	step := niceCeil((hi - lo) / 5)
	var ts []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step/1e6; t += step {
		ts = append(ts, t)
	}
	return ts
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func format(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func text(img *image.RGBA, s string, x, y int, col color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// line draws a one-pixel line (Bresenham's).
func line(img *image.RGBA, x0, y0, x1, y1 int, col color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, col)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

// thick draws a line two pixels wide.
func thick(img *image.RGBA, x0, y0, x1, y1 int, col color.Color) {
	for _, d := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		line(img, x0+d[0], y0+d[1], x1+d[0], y1+d[1], col)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
