package agentmem

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Notes operations: the names of seed 003's manage_long_term_memory tool.
const (
	NotesRead           = "read"
	NotesOverwrite      = "overwrite"
	NotesAppend         = "append"
	NotesPrepend        = "prepend"
	NotesDeleteSection  = "delete_section_by_header"
	NotesReplaceSection = "replace_section_by_header"
	NotesDeleteAll      = "delete_all_notes"
)

// notesOps lists the operations in the order error messages name them.
var notesOps = []string{NotesRead, NotesOverwrite, NotesAppend, NotesPrepend, NotesDeleteSection, NotesReplaceSection, NotesDeleteAll}

// MaxNotesBytes bounds a version of the notes: the document an operation
// makes, and the content it is given.
const MaxNotesBytes = 64 << 10

// Notes is the Markdown document that an agent keeps about a user (seed
// 003's long-term notes): one per (user, agent), edited by NotesOp, each
// write a new version (1, 2, 3…) kept in its history. Version 0, with no
// content and no UpdatedAt, stands for notes never written.
type Notes struct {
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id"`
	Content string `json:"content"`
	Version int64  `json:"version"`
	// Operation is the operation that made this version ("" for version 0).
	Operation string    `json:"operation,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"` // when this version was written
}

// NotesOp is one operation on the notes of a user and agent: the body of
// POST …/notes/ops.
//
//   - read (the default) returns the notes and writes nothing.
//   - overwrite replaces the document with Content ("" empties it).
//   - append adds Content after the document, prepend before it, separated
//     from it by one blank line (blank lines at the seam are collapsed).
//   - delete_section_by_header removes the section SectionHeader names.
//   - replace_section_by_header replaces that section's body with Content,
//     keeping its header line (and the blank line after it); if Content starts with a header of the
//     section's level or higher (fewer or as many #), it replaces the
//     header line too (which renames the section).
//   - delete_all_notes empties the document.
//
// Sections are those of ATX headers ("## Goals"): a section runs from its
// header line to the next header of the same or a higher level, or to the
// end. Setext headers (a line underlined with === or ---) do not make
// sections: --- is also a thematic break, and agents write ATX headers. A
// header is a line indented by at most three spaces, outside fenced code
// blocks (``` or ~~~, as CommonMark reads them; an unclosed fence runs to
// the end), starting with one to six # and a space, a tab or the line's
// end; its text is the rest, trimmed, without a closing run of #.
//
// SectionHeader names a section by its header line ("## Goals", which
// matches that level only) or by its text alone ("Goals", any level),
// compared case-sensitively after trimming; the first matching header of
// the document is the one. No match is EUNPROCESSABLE (422): the notes
// exist, but the operation cannot be applied to them.
//
// Inserted content takes the document's line endings (CRLF when the
// document has any); everything else keeps its bytes.
type NotesOp struct {
	Operation     string `json:"operation"`
	Content       string `json:"content,omitempty"`
	SectionHeader string `json:"section_header,omitempty"`
	// ExpectedVersion, when set, makes a write fail with ECONFLICT unless
	// the notes are at that version (0: never written); read ignores it.
	ExpectedVersion *int64 `json:"expected_version,omitempty"`
}

// Validate checks an operation and fills in the default operation, read
// (as seed 003's tool does): a known name, the fields it uses and no
// others, text without NUL, content within MaxNotesBytes (ETOOLARGE), and
// a non-negative expected version.
func (op *NotesOp) Validate() error {
	var needsContent, takesContent, takesHeader bool
	switch op.Operation {
	case NotesAppend, NotesPrepend:
		needsContent, takesContent = true, true
	case NotesOverwrite:
		takesContent = true
	case NotesReplaceSection:
		takesContent, takesHeader = true, true
	case NotesDeleteSection:
		takesHeader = true
	case "":
		op.Operation = NotesRead // the default of seed 003's tool
	case NotesRead, NotesDeleteAll:
	default:
		return Errorf(EINVALID, "operation must be one of %s, not %q.", strings.Join(notesOps, ", "), op.Operation)
	}
	if err := ValidateText("content", op.Content); err != nil {
		return err
	}
	switch {
	case len(op.Content) > MaxNotesBytes:
		return Errorf(ETOOLARGE, "content is %d bytes; the limit of the notes is %d bytes.", len(op.Content), MaxNotesBytes)
	case needsContent && strings.TrimSpace(op.Content) == "":
		return Errorf(EINVALID, "content is required by %s.", op.Operation)
	case !takesContent && op.Content != "":
		return Errorf(EINVALID, "content is not used by %s.", op.Operation)
	}
	if takesHeader {
		if _, _, err := parseSectionHeader(op.SectionHeader); err != nil {
			return err
		}
	} else if op.SectionHeader != "" {
		return Errorf(EINVALID, "section_header is not used by %s.", op.Operation)
	}
	if op.ExpectedVersion != nil && *op.ExpectedVersion < 0 {
		return Errorf(EINVALID, "expected_version must be 0 or more, not %d.", *op.ExpectedVersion)
	}
	return nil
}

// ApplyNotesOp returns the document that op makes of doc (see NotesOp);
// read returns doc unchanged. It is pure: no I/O, no version check.
// Returns EINVALID as NotesOp.Validate, EUNPROCESSABLE when the section op
// names is not in doc, and ETOOLARGE when the result would exceed
// MaxNotesBytes.
func ApplyNotesOp(doc string, op NotesOp) (string, error) {
	if err := op.Validate(); err != nil {
		return "", err
	}
	eol := lineEnding(doc)
	content := op.Content
	if doc != "" {
		content = withLineEnding(content, eol)
	}
	var out string
	switch op.Operation {
	case NotesRead:
		return doc, nil
	case NotesOverwrite:
		out = op.Content
	case NotesDeleteAll:
		out = ""
	case NotesAppend:
		out = joinBlocks(doc, content, eol)
	case NotesPrepend:
		out = joinBlocks(content, doc, eol)
	case NotesDeleteSection, NotesReplaceSection:
		lines := splitLines(doc)
		start, end, level, err := findSection(lines, op.SectionHeader)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, l := range lines[:start] {
			b.WriteString(l)
		}
		if op.Operation == NotesReplaceSection {
			body := trimBlankEnd(content)
			if first, _, _ := strings.Cut(body, "\n"); !startsWithHeaderOf(first, level) {
				header := lines[start]
				if !strings.HasSuffix(header, "\n") {
					header += eol
				}
				b.WriteString(header)
				// Keep the blank line that followed the header.
				if start+1 < end && strings.TrimSpace(lines[start+1]) == "" && body != "" {
					b.WriteString(eol)
					body = trimBlankStart(body)
				}
			}
			if body != "" {
				b.WriteString(body + eol)
			}
			if end < len(lines) {
				b.WriteString(eol) // a blank line before the next section
			}
		}
		for _, l := range lines[end:] {
			b.WriteString(l)
		}
		out = b.String()
		if end == len(lines) && op.Operation == NotesDeleteSection {
			// The blank lines that separated the last section from the one
			// before it now end the document.
			if out = trimBlankEnd(out); out != "" {
				out += eol
			}
		}
	}
	if len(out) > MaxNotesBytes {
		return "", Errorf(ETOOLARGE, "The notes would be %d bytes after %s; the limit is %d bytes.", len(out), op.Operation, MaxNotesBytes)
	}
	return out, nil
}

// Next returns the version of the notes that op makes of n at now, for a
// store to write: n's next version, with ApplyNotesOp's document. Returns
// ECONFLICT if op.ExpectedVersion is set and is not n.Version, EINVALID
// for a read (which writes nothing), and ApplyNotesOp's errors.
func (n *Notes) Next(op NotesOp, now time.Time) (*Notes, error) {
	if err := op.Validate(); err != nil {
		return nil, err
	}
	if op.Operation == NotesRead {
		return nil, Errorf(EINVALID, "read does not write the notes.")
	}
	if op.ExpectedVersion != nil && *op.ExpectedVersion != n.Version {
		return nil, Errorf(ECONFLICT, "The notes are at version %d, not the expected version %d; read them again and retry.", n.Version, *op.ExpectedVersion)
	}
	doc, err := ApplyNotesOp(n.Content, op)
	if err != nil {
		return nil, err
	}
	return &Notes{UserID: n.UserID, AgentID: n.AgentID, Content: doc, Version: n.Version + 1, Operation: op.Operation, UpdatedAt: now}, nil
}

// ValidateNotesOwner checks the user and agent whose notes a store call
// names: an agent is required (notes belong to a user and an agent).
func ValidateNotesOwner(userID, agentID string) error {
	if err := ValidateUserID(userID); err != nil {
		return err
	}
	return ValidateID("agent_id", agentID)
}

// NotesFilter pages through the history of a user and agent's notes,
// newest version first.
type NotesFilter struct {
	Limit  int    // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor string // opaque, from a previous page's next cursor
}

// NotesCursor is the keyset position of FindNotesHistory: the last
// version of the page.
type NotesCursor struct {
	Version int64 `json:"v"`
}

// NotesStore stores the notes of users and agents with every version.
// DeleteUser erases them; deleting a thread leaves them.
type NotesStore interface {
	// FindNotes returns the current notes of the user and agent, or
	// version 0 with no content when none were written: never ENOTFOUND.
	// This is what a context builder injects into the prompt.
	FindNotes(ctx context.Context, userID, agentID string) (*Notes, error)

	// PutNotes applies op to the current notes and stores the result as
	// the next version (see Notes.Next), atomically: of two puts expecting
	// one version, one succeeds and the other gets ECONFLICT; puts that
	// expect none take turns, and none is lost. It records the user (see
	// UserStore.FindUserIDs) and returns the new version. Returns EINVALID
	// for a bad user, agent or op (read included), ECONFLICT,
	// EUNPROCESSABLE and ETOOLARGE as Notes.Next.
	PutNotes(ctx context.Context, userID, agentID string, op NotesOp) (*Notes, error)

	// FindNotesHistory returns a page of every version of the notes of the
	// user and agent, newest first, and the next cursor; an empty page
	// when none were written.
	FindNotesHistory(ctx context.Context, userID, agentID string, f NotesFilter) ([]*Notes, string, error)
}

// lineEnding returns "\r\n" if doc has any CRLF line ending, "\n" otherwise.
func lineEnding(doc string) string {
	if strings.Contains(doc, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// withLineEnding returns s with every line ending made eol.
func withLineEnding(s, eol string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol != "\n" {
		s = strings.ReplaceAll(s, "\n", eol)
	}
	return s
}

// splitLines splits doc into lines, each with its line ending (the last
// may have none).
func splitLines(doc string) []string {
	lines := strings.SplitAfter(doc, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // doc is empty or ends with a line ending
	}
	return lines
}

// trimBlankEnd removes the blank lines (empty or whitespace only) at the
// end of s, and the line ending of the last line left.
func trimBlankEnd(s string) string {
	for {
		t := strings.TrimRight(s, "\r\n")
		i := strings.LastIndexByte(t, '\n')
		if t == "" || strings.TrimSpace(t[i+1:]) != "" {
			return t
		}
		s = t[:i+1]
	}
}

// trimBlankStart removes the blank lines at the start of s.
func trimBlankStart(s string) string {
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		if strings.TrimSpace(line) != "" {
			return s
		}
		s = rest
	}
	return ""
}

// joinBlocks returns a, a blank line and b; either alone when the other is
// blank.
func joinBlocks(a, b, eol string) string {
	a, b = trimBlankEnd(a), trimBlankStart(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a + eol
	}
	return a + eol + eol + b
}

// atxHeader parses line (without its line ending) as an ATX header and
// returns its level (1 to 6) and text; ok is false for any other line.
func atxHeader(line string) (level int, text string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return 0, "", false
	}
	rest := line[indent:]
	level = len(rest) - len(strings.TrimLeft(rest, "#"))
	if level < 1 || level > 6 {
		return 0, "", false
	}
	rest = rest[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false // "#5" or "#hashtag" is text
	}
	text = strings.Trim(rest, " \t")
	// A closing run of # counts when it is the whole text or follows a space.
	if closed := strings.TrimRight(text, "#"); closed == "" {
		text = ""
	} else if closed != text && (strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t")) {
		text = strings.TrimRight(closed, " \t")
	}
	return level, text, true
}

// fence reports whether line opens a fenced code block, and returns its
// marker (the run of ` or ~ that opened it).
func fence(line string) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return "", false
	}
	rest := line[indent:]
	for _, c := range []string{"`", "~"} {
		n := len(rest) - len(strings.TrimLeft(rest, c))
		if n < 3 {
			continue
		}
		if c == "`" && strings.Contains(rest[n:], "`") {
			return "", false // an info string with a backtick: inline code, not a fence
		}
		return rest[:n], true
	}
	return "", false
}

// closesFence reports whether line closes the fence opened by marker: a
// run of the same character at least as long, indented by at most three
// spaces, with nothing after it but spaces.
func closesFence(line, marker string) bool {
	line = strings.TrimRight(line, "\r\n")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return false
	}
	rest := line[indent:]
	n := len(rest) - len(strings.TrimLeft(rest, marker[:1]))
	return n >= len(marker) && strings.TrimSpace(rest[n:]) == ""
}

// notesHeader is a header of a document: its line, level and text.
type notesHeader struct {
	line, level int
	text        string
}

// headers returns the ATX headers of lines outside fenced code blocks.
func headers(lines []string) []notesHeader {
	var hs []notesHeader
	marker := ""
	for i, l := range lines {
		if marker != "" {
			if closesFence(l, marker) {
				marker = ""
			}
			continue
		}
		if m, ok := fence(l); ok {
			marker = m
			continue
		}
		if level, text, ok := atxHeader(strings.TrimSuffix(l, "\n")); ok {
			hs = append(hs, notesHeader{i, level, text})
		}
	}
	return hs
}

// parseSectionHeader reads a section_header: a header line ("## Goals")
// gives its level and text, anything else is text of any level (0).
func parseSectionHeader(s string) (level int, text string, err error) {
	if err := ValidateText("section_header", s); err != nil {
		return 0, "", err
	}
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n") {
		return 0, "", Errorf(EINVALID, "section_header must be one line.")
	}
	level, text, ok := atxHeader(s)
	if !ok {
		level, text = 0, s
	}
	if text == "" {
		return 0, "", Errorf(EINVALID, "section_header is required: a header such as \"## Goals\" or its text \"Goals\".")
	}
	return level, text, nil
}

// findSection returns the lines [start, end) of the section that
// sectionHeader names, and its level. Returns EUNPROCESSABLE, naming the
// headers there are, when no header matches.
func findSection(lines []string, sectionHeader string) (start, end, level int, err error) {
	wantLevel, want, err := parseSectionHeader(sectionHeader)
	if err != nil {
		return 0, 0, 0, err
	}
	hs := headers(lines)
	for i, h := range hs {
		if h.text != want || (wantLevel != 0 && h.level != wantLevel) {
			continue
		}
		end := len(lines)
		for _, next := range hs[i+1:] {
			if next.level <= h.level {
				end = next.line
				break
			}
		}
		return h.line, end, h.level, nil
	}
	const shown = 20
	names := make([]string, 0, min(len(hs), shown))
	for _, h := range hs[:min(len(hs), shown)] {
		names = append(names, fmt.Sprintf("%q", strings.Repeat("#", h.level)+" "+h.text))
	}
	switch {
	case len(hs) == 0:
		return 0, 0, 0, Errorf(EUNPROCESSABLE, "The notes have no section %q: they have no headers.", strings.TrimSpace(sectionHeader))
	case len(hs) > shown:
		names = append(names, "…")
	}
	return 0, 0, 0, Errorf(EUNPROCESSABLE, "The notes have no section %q; their headers are %s.", strings.TrimSpace(sectionHeader), strings.Join(names, ", "))
}

// startsWithHeaderOf reports whether line is a header of level or higher
// (as many # or fewer).
func startsWithHeaderOf(line string, level int) bool {
	l, _, ok := atxHeader(line)
	return ok && l <= level
}
