package agentmem

import (
	"fmt"
	"strings"
	"time"
)

var roleIcons = map[string]string{RoleUser: "👤", RoleAssistant: "🤖", RoleSystem: "⚙️", RoleTool: "🔧"}

// Markdown renders the export in seed 002's layout: a title, the thread's
// facts, then one section per message separated by rules.
func (x *ThreadExport) Markdown() string {
	var b strings.Builder
	t := x.Thread
	title := t.Title
	if title == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(&b, "# %s\n**Thread ID**: %s\n**Created**: %s\n**Updated**: %s\n**Messages**: %d\n",
		title, t.ID, t.CreatedAt.Format(time.RFC3339), t.UpdatedAt.Format(time.RFC3339), len(x.Messages))
	if t.AgentID != "" {
		fmt.Fprintf(&b, "**Agent**: %s\n", t.AgentID)
	}
	b.WriteString("\n---\n\n")
	for _, m := range x.Messages {
		role := strings.ToUpper(m.Role[:1]) + m.Role[1:]
		fmt.Fprintf(&b, "## %s %s", roleIcons[m.Role], role)
		if m.Name != "" {
			fmt.Fprintf(&b, " (%s)", m.Name)
		}
		b.WriteString("\n\n")
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteString("\n\n")
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "Tool call `%s`: `%s`\n\n", c.Function.Name, c.Function.Arguments)
		}
		b.WriteString("---\n\n")
	}
	return b.String()
}

// Markdown renders a user's export to read: the profile, the agents'
// notes, the memories (invalidated ones struck through), the entities,
// then each thread in seed 002's layout.
func (x *UserExport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n**Exported**: %s\n**Threads**: %d\n**Memories**: %d\n\n", x.UserID, x.ExportedAt.Format(time.RFC3339), len(x.Threads), len(x.Memories))
	if len(x.Profiles) > 0 {
		p := x.Profiles[0] // newest first
		fmt.Fprintf(&b, "## Profile (version %d)\n\n%s\n\n", p.Version, p.Text)
	}
	current := map[string]*Notes{}
	var agents []string
	for _, n := range x.Notes {
		if current[n.AgentID] == nil {
			agents = append(agents, n.AgentID)
		}
		if c := current[n.AgentID]; c == nil || n.Version > c.Version {
			current[n.AgentID] = n
		}
	}
	for _, a := range agents {
		n := current[a]
		fmt.Fprintf(&b, "## Notes of %s (version %d)\n\n%s\n\n", a, n.Version, strings.TrimSpace(n.Content))
	}
	if len(x.Memories) > 0 {
		b.WriteString("## Memories\n\n")
		for _, m := range x.Memories {
			text := m.Text
			if m.InvalidAt != nil {
				text = "~~" + text + "~~ (invalid since " + m.InvalidAt.Format(time.DateOnly) + ")"
			}
			if m.Category != "" {
				text += " _(" + m.Category + ")_"
			}
			fmt.Fprintf(&b, "- %s\n", text)
		}
		b.WriteString("\n")
	}
	if len(x.Entities) > 0 {
		b.WriteString("## Entities\n\n")
		for _, e := range x.Entities {
			line := "- " + e.Name
			if e.Type != "" {
				line += " (" + e.Type + ")"
			}
			if n := len(e.References); n == 1 {
				line += ": referred to once"
			} else if n > 1 {
				line += fmt.Sprintf(": referred to %d times", n)
			}
			b.WriteString(line + "\n")
		}
		b.WriteString("\n")
	}
	for _, t := range x.Threads {
		b.WriteString("---\n\n")
		b.WriteString(t.Markdown())
	}
	return b.String()
}
