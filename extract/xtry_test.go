package extract

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
)

func TestXTry(t *testing.T) {
	for _, s := range strings.Split(os.Getenv("XT"), "|") {
		cs := Heuristic([]*agentmem.Message{{Role: agentmem.RoleUser, Content: s}})
		fmt.Printf("%s\n", s)
		for _, c := range cs {
			fmt.Printf("   -> %s [%s slot=%s obj=%s neg=%v retract=%v]\n", c.Text, c.Category, c.Slot, c.Object, c.Negated, c.Retract)
		}
	}
}
