package window

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem"
)

// Prompts are the named system prompt templates of the server's
// configuration (seed 004's prompt modes). A request picks one by name, or
// asks with "auto" for the first rule whose keywords appear in its input.
type Prompts struct {
	Templates map[string]string `json:"templates"`
	// Default is the template used when a request names none ("" for no
	// system prompt) and when no rule matches.
	Default string       `json:"default"`
	Rules   []PromptRule `json:"rules"`
}

// PromptRule picks Prompt when any of its keywords is a word of the input
// (case-insensitive).
type PromptRule struct {
	Prompt   string   `json:"prompt"`
	Keywords []string `json:"keywords"`
}

// AutoPrompt asks for the template inferred from the input.
const AutoPrompt = "auto"

// Validate checks that the default and every rule name a template.
func (p Prompts) Validate() error {
	if p.Default != "" {
		if _, ok := p.Templates[p.Default]; !ok {
			return agentmem.Errorf(agentmem.EINVALID, "default prompt %q is not a template.", p.Default)
		}
	}
	for _, r := range p.Rules {
		if _, ok := p.Templates[r.Prompt]; !ok {
			return agentmem.Errorf(agentmem.EINVALID, "rule prompt %q is not a template.", r.Prompt)
		}
	}
	return nil
}

// resolve returns the system prompt of a request and the name of the
// template it came from ("" for a prompt given in the request or none).
func (p Prompts) resolve(req Request) (string, string, error) {
	if req.System != "" {
		return req.System, "", nil
	}
	name := req.Prompt
	if name == AutoPrompt {
		name = p.infer(cmp.Or(req.Input, req.Query))
	} else if name == "" {
		name = p.Default
	}
	if name == "" {
		return "", "", nil
	}
	text, ok := p.Templates[name]
	if !ok {
		known := make([]string, 0, len(p.Templates))
		for k := range p.Templates {
			known = append(known, k)
		}
		sort.Strings(known)
		if len(known) == 0 {
			return "", "", agentmem.Errorf(agentmem.EINVALID, "prompt %q is not a configured template: none is configured (serve --prompts FILE); send the prompt itself as system.", req.Prompt)
		}
		return "", "", agentmem.Errorf(agentmem.EINVALID, "prompt %q is not a configured template (known: %s, or auto).", req.Prompt, strings.Join(known, ", "))
	}
	return text, name, nil
}

// infer returns the prompt of the first rule with a keyword among the
// input's words, else the default.
func (p Prompts) infer(input string) string {
	words := strings.FieldsFunc(strings.ToLower(input), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, r := range p.Rules {
		for _, k := range r.Keywords {
			if slices.Contains(words, strings.ToLower(k)) {
				return r.Prompt
			}
		}
	}
	return p.Default
}
