package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// walkthroughSection is the README section whose sh blocks TestREADME runs,
// in order, as one shell session.
const walkthroughSection = "## Using the API"

// readmeURL is the server address the README's examples use; the test
// replaces it with the address of the server it started.
const readmeURL = "http://127.0.0.1:8080"

// example is one shell command of the README and the output the README
// shows for it ("# → …" after it), "" when it shows none.
type example struct {
	line    int    // of README.md where the command starts
	command string // possibly several lines
	want    string // the text after "# →" and its continuation lines
}

// TestREADME runs the README's API walkthrough top to bottom against a
// real `serve`, with curl and bash as a reader would, and checks every
// output the README shows: each command must succeed (curl --fail-with-body)
// and print what its "# →" comment says ("…" stands for any text;
// whitespace is ignored).
func TestREADME(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is needed to run the README: %v", tool, err)
			}
			t.Skipf("%s is needed to run the README: %v", tool, err)
		}
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := readmeExamples(string(src), walkthroughSection)
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < 10 {
		t.Fatalf("found %d examples in README's %q, want the walkthrough (10 or more)", len(examples), walkthroughSection)
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		runREADME(t, examples, filepath.Join(t.TempDir(), "agentmem.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		runREADME(t, examples, testutil.MustCreateSchema(t))
	})
}

// runREADME serves db and runs the examples against it.
func runREADME(t *testing.T, examples []example, db string) {
	srv := MustServe(t, db)
	outputs, err := runExamples(t.Context(), examples, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range examples {
		out := outputs[i]
		if out.status != 0 && !strings.Contains(ex.want, `"error"`) {
			t.Errorf("README.md:%d: %s\nexited %d: %s", ex.line, ex.command, out.status, out.text)
			continue
		}
		if ex.want != "" && !matchOutput(ex.want, out.text) {
			t.Errorf("README.md:%d: %s\nprinted %s\nREADME shows %s", ex.line, ex.command, out.text, ex.want)
		}
	}
}

// output is what one example printed and its exit status.
type output struct {
	text   string
	status int
}

// runExamples runs the examples as one bash script, so that variables set
// by one are seen by the next, with curl failing on an HTTP error status,
// and returns each one's output.
func runExamples(ctx context.Context, examples []example, url string) ([]output, error) {
	var script strings.Builder
	script.WriteString(curlWrapper)
	for i, ex := range examples {
		fmt.Fprintf(&script, "echo '@@@begin %d'\n{\n%s\n}\nprintf '\\n@@@end %d %%d\\n' $?\n", i, strings.ReplaceAll(ex.command, readmeURL, url), i)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the walkthrough script failed: %v\n%s", err, stderr.String())
	}
	outputs := make([]output, len(examples))
	re := regexp.MustCompile(`(?s)@@@begin (\d+)\n(.*?)\n@@@end \d+ (\d+)\n`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(string(stdout), -1) {
		i, _ := strconv.Atoi(m[1])
		status, _ := strconv.Atoi(m[3])
		outputs[i] = output{text: m[2], status: status}
		found++
	}
	if found != len(examples) {
		return nil, fmt.Errorf("the script printed %d of %d outputs:\n%s\n%s", found, len(examples), stdout, stderr.String())
	}
	return outputs, nil
}

// readmeExamples returns the commands of the sh blocks of the README's
// section named heading, each with the output shown after it.
func readmeExamples(readme, heading string) ([]example, error) {
	lines := strings.Split(readme, "\n")
	start := -1
	for i, l := range lines {
		if l == heading {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("README.md has no section %q", heading)
	}
	var (
		examples []example
		inBlock  bool
		cmd      []string // the command being read
		cmdLine  int
	)
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			break
		}
		if !inBlock {
			inBlock = l == "```sh"
			continue
		}
		if l == "```" {
			if cmd != nil {
				return nil, fmt.Errorf("README.md:%d: the command does not end before its block does", cmdLine)
			}
			inBlock = false
			continue
		}
		if cmd == nil {
			trimmed := strings.TrimSpace(l)
			if want, ok := strings.CutPrefix(trimmed, "# →"); ok && len(examples) > 0 {
				ex := &examples[len(examples)-1]
				ex.want = strings.TrimSpace(want)
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#  ") {
					i++
					ex.want += " " + strings.TrimSpace(strings.TrimPrefix(lines[i], "#"))
				}
				continue
			}
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			cmdLine = i + 1
		}
		cmd = append(cmd, l)
		text := strings.Join(cmd, "\n")
		if strings.HasSuffix(l, "\\") || !complete(text) {
			continue
		}
		ex := example{line: cmdLine, command: text}
		if c, want, ok := strings.Cut(text, "# →"); ok {
			ex.command, ex.want = strings.TrimSpace(c), strings.TrimSpace(want)
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#  ") {
				i++
				ex.want += " " + strings.TrimSpace(strings.TrimPrefix(lines[i], "#"))
			}
		}
		examples = append(examples, ex)
		cmd = nil
	}
	return examples, nil
}

// complete reports whether bash parses text as whole commands.
func complete(text string) bool {
	return exec.Command("bash", "-n", "-c", text).Run() == nil
}

// matchOutput reports whether got is what want shows: want's parts
// between "…" appear in got in order, the first at the start unless want
// starts with "…", the last at the end unless it ends with "…". Whitespace
// is ignored.
func matchOutput(want, got string) bool {
	strip := func(s string) string {
		return strings.Join(strings.Fields(s), "")
	}
	parts := strings.Split(strip(want), "…")
	got = strip(got)
	last := len(parts) - 1
	for i, p := range parts {
		if i == last && i > 0 && p != "" {
			return strings.HasSuffix(got, p)
		}
		j := strings.Index(got, p)
		if j < 0 || (i == 0 && j != 0) {
			return false
		}
		got = got[j+len(p):]
	}
	return len(parts) > 1 || got == ""
}

func TestMatchOutput(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a": 1}`, "{\"a\":1}\n", true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1,…}`, `{"a":1,"b":2}`, true},
		{`{"a":1,…}`, `{"b":2,"a":1}`, false},
		{`{…"b":2}`, `{"a":1,"b":2}`, true},
		{`{…"b":2}`, `{"a":1,"b":2,"c":3}`, false},
		{`{"a":1}`, `{"a":1}{"a":1}`, false},
		{`…"x"…"y"…`, `"y""x"`, false},
		{`…"x"…"y"…`, `"x","y"`, true},
	} {
		if got := matchOutput(tc.want, tc.got); got != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}

func TestReadmeExamples(t *testing.T) {
	readme := "# x\n\n## Using the API\n\nText.\n\n```sh\nA=http://x   # the base\n# Make one.\n" +
		"curl -s -X POST $A -d '{\n  \"a\": 1\n}'\n# → {\"a\":1,\n#    \"b\":2}\n" +
		"curl -s $A/b     # → {\"b\":…}\n```\n\n## Next\n\n```sh\nnot this\n```\n"
	got, err := readmeExamples(readme, "## Using the API")
	if err != nil {
		t.Fatal(err)
	}
	want := []example{
		{line: 8, command: "A=http://x   # the base"},
		{line: 10, command: "curl -s -X POST $A -d '{\n  \"a\": 1\n}'", want: `{"a":1, "b":2}`},
		{line: 15, command: "curl -s $A/b", want: `{"b":…}`},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(example{})); diff != "" {
		t.Errorf("readmeExamples (-want +got):\n%s", diff)
	}
}

// curlWrapper makes the script's curl fail on an HTTP error status, as a
// reader would see it in the body, unless the command asks for -f itself.
const curlWrapper = `curl() {
  case " $* " in
    *" -sf "*|*" -f "*|*" --fail "*) command curl "$@" ;;
    *) command curl --fail-with-body --no-progress-meter "$@" ;;
  esac
}
`
