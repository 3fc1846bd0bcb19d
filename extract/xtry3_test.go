package extract

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestXTry3(t *testing.T) {
	for _, s := range strings.Split(os.Getenv("XT"), "|") {
		toks := stripHedge(stripFillers(expand(tokenize(s))))
		fmt.Printf("%q\n  withSubject=%q\n  fragment=%q\n", toks, withSubject(toks), fragment(toks))
	}
}
