package learned

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Line is one labelled message of the corpus (corpus/SPEC.md).
type Line struct {
	Text  string `json:"text"`
	Facts []struct {
		Memory string `json:"memory"`
		Slot   string `json:"slot"`
		Change string `json:"change"`
	} `json:"facts"`
	Not string `json:"not"`
}

// ParseLines reads a JSON Lines file of labelled messages; name names it
// in errors.
func ParseLines(name string, b []byte) ([]Line, error) {
	var out []Line
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		for _, f := range l.Facts {
			if !slices.Contains(Slots, f.Slot) || f.Slot == None {
				return nil, fmt.Errorf("%s:%d: unknown slot %q", name, n, f.Slot)
			}
			if !slices.Contains(Changes, f.Change) {
				return nil, fmt.Errorf("%s:%d: unknown change %q", name, n, f.Change)
			}
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// SlotIndex returns the class of a slot, -1 if it is none of Slots.
func SlotIndex(slot string) int { return slices.Index(Slots, slot) }

// Change is the change of a message's facts, for the change head: an end
// if one of them ends, else a correction, else an update, else new.
func (l *Line) Change() int {
	best := 0
	for _, f := range l.Facts {
		c := slices.Index(Changes, f.Change)
		if rank[c] > rank[best] {
			best = c
		}
	}
	return best
}

// rank orders Changes for Line.Change: new < update < correction < end.
var rank = []int{0, 1, 3, 2}
