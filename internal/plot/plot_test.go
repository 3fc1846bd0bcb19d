package plot_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/agentmem/agentmem/internal/plot"
)

// TestWritePNG: the chart is a PNG of its size; each series is drawn in
// its colour where its points are, and nowhere else (a rising and a flat
// line, on a white page).
func TestWritePNG(t *testing.T) {
	c := plot.Chart{Title: "p99 over time", XLabel: "minutes", YLabel: "ms", Width: 600, Height: 300, Series: []plot.Series{
		{Name: "rising", Points: []plot.Point{{0, 0}, {10, 100}}},
		{Name: "flat", Points: []plot.Point{{0, 50}, {10, 50}}},
	}}
	var buf bytes.Buffer
	if err := c.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("AGENTMEM_SCREENSHOTS"); dir != "" {
		os.WriteFile(dir+"/plot.png", buf.Bytes(), 0o644)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 600 || b.Dy() != 300 {
		t.Fatalf("size %v", b)
	}
	blue, red := color.RGBA{0x2f, 0x6f, 0xde, 0xff}, color.RGBA{0xd9, 0x48, 0x1c, 0xff}
	// The flat line lies on one row: count red pixels per row in the plot
	// area (the legend, at the bottom, is left out).
	rows := map[int]int{}
	for y := 0; y < 300-40; y++ {
		for x := 0; x < 600; x++ {
			if sameColor(img.At(x, y), red) {
				rows[y]++
			}
		}
	}
	var long, flatY int
	for y, n := range rows {
		if n > 400 {
			long++
			flatY = y
		}
	}
	if long == 0 || long > 2 {
		t.Errorf("the flat series should be one long horizontal line (2 px thick): rows with red %v", rows)
	}
	// The rising line: below the flat one at the left, above it at the
	// right, crossing it in the middle.
	if y := blueAt(img, 80, blue); y < 0 || y <= flatY {
		t.Errorf("at the left the rising series is at row %d, want below the flat one's %d", y, flatY)
	}
	if y := blueAt(img, 570, blue); y < 0 || y >= flatY {
		t.Errorf("at the right the rising series is at row %d, want above the flat one's %d", y, flatY)
	}
}

// blueAt is the first row of column x in colour col (-1 for none).
func blueAt(img image.Image, x int, col color.RGBA) int {
	for y := 0; y < img.Bounds().Dy()-40; y++ {
		if sameColor(img.At(x, y), col) {
			return y
		}
	}
	return -1
}

func sameColor(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	return uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B
}
