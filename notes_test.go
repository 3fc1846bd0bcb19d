package agentmem_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// golden compares got with testdata/notes/name.golden, rewriting it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "notes", name+".golden"), got, *update)
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	if name == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join("testdata", "notes", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApplyNotesOp_Golden applies every operation to the documents of
// testdata/notes and compares the result, or the error as "error CODE:
// message", with testdata/notes/NAME.golden.
func TestApplyNotesOp_Golden(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		op        agentmem.NotesOp
	}{
		{"read", "doc.md", agentmem.NotesOp{Operation: "read"}},
		{"overwrite", "doc.md", agentmem.NotesOp{Operation: "overwrite", Content: "# Fresh start\n"}},
		{"overwrite_empty", "doc.md", agentmem.NotesOp{Operation: "overwrite"}},
		{"delete_all", "doc.md", agentmem.NotesOp{Operation: "delete_all_notes"}},
		{"append", "doc.md", agentmem.NotesOp{Operation: "append", Content: "## Family\nA daughter, Maria.\n"}},
		{"append_to_empty", "", agentmem.NotesOp{Operation: "append", Content: "## Family\nA daughter, Maria.\n"}},
		{"append_blank_seam", "eof.md", agentmem.NotesOp{Operation: "append", Content: "\n\nLast words.\n"}},
		{"prepend", "doc.md", agentmem.NotesOp{Operation: "prepend", Content: "> Read this first.\n\n\n"}},
		// A section holds its subsections and code fences; the headers in
		// the fences do not end it.
		{"delete_section_nested", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "## Goals"}},
		{"delete_section_by_text", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "  Marathon plan "}},
		{"delete_section_closing_hashes", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Preferences"}},
		{"delete_section_last", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "## Travel"}},
		{"delete_section_top", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "# Notes about Alice"}},
		{"delete_section_eof_header", "eof.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Done"}},
		{"replace_section_body", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "## Goals", Content: "- Swim a mile\n"}},
		{"replace_section_renamed", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "Goals", Content: "## Ambitions\n\n- Swim a mile\n"}},
		{"replace_section_subheader_is_body", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "Goals", Content: "### Swimming\nA mile.\n"}},
		{"replace_section_last", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "Travel", Content: "Porto in June."}},
		{"replace_section_empty_body", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "Preferences"}},
		{"replace_section_eof_header", "eof.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "## Done", Content: "Everything."}},
		{"crlf_append", "crlf.md", agentmem.NotesOp{Operation: "append", Content: "## Food\nTea.\n"}},
		{"crlf_prepend", "crlf.md", agentmem.NotesOp{Operation: "prepend", Content: "Top.\n"}},
		{"crlf_replace_section", "crlf.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "Goals", Content: "- Run\n- Row\n"}},
		{"crlf_delete_section", "crlf.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "## Travel"}},
		{"fences_longer_closing", "fences.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "After"}},
		{"err_header_in_fence", "fences.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Inside"}},
		{"err_header_in_unclosed_fence", "fences.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Unclosed fence"}},
		{"err_missing_section", "doc.md", agentmem.NotesOp{Operation: "replace_section_by_header", SectionHeader: "## Hobbies", Content: "x"}},
		{"err_wrong_level", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "### Goals"}},
		{"err_case_sensitive", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "goals"}},
		{"err_hashtag_is_text", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "hashtag is text, not a header"}},
		{"err_indented_code", "doc.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "indented code, not a header"}},
		{"err_setext", "setext.md", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Title"}},
		{"err_empty_doc", "", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "Goals"}},
		{"err_too_large", "doc.md", agentmem.NotesOp{Operation: "append", Content: strings.Repeat("x", agentmem.MaxNotesBytes-100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := agentmem.ApplyNotesOp(readDoc(t, tc.doc), tc.op)
			if err != nil {
				out = "error " + agentmem.ErrorCode(err) + ": " + agentmem.ErrorMessage(err) + "\n"
			}
			golden(t, tc.name, []byte(out))
		})
	}
}

func TestNotesOp_Validate(t *testing.T) {
	neg := int64(-1)
	for _, tc := range []struct {
		name string
		op   agentmem.NotesOp
		code string
	}{
		{"DefaultRead", agentmem.NotesOp{}, ""},
		{"DefaultReadTakesNoContent", agentmem.NotesOp{Content: "x"}, agentmem.EINVALID},
		{"UnknownOperation", agentmem.NotesOp{Operation: "delete"}, agentmem.EINVALID},
		{"AppendNothing", agentmem.NotesOp{Operation: "append", Content: " \n"}, agentmem.EINVALID},
		{"ContentUnused", agentmem.NotesOp{Operation: "delete_all_notes", Content: "x"}, agentmem.EINVALID},
		{"HeaderUnused", agentmem.NotesOp{Operation: "append", Content: "x", SectionHeader: "Goals"}, agentmem.EINVALID},
		{"HeaderMissing", agentmem.NotesOp{Operation: "delete_section_by_header"}, agentmem.EINVALID},
		{"HeaderOnlyHashes", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "## "}, agentmem.EINVALID},
		{"HeaderTwoLines", agentmem.NotesOp{Operation: "delete_section_by_header", SectionHeader: "A\nB"}, agentmem.EINVALID},
		{"NUL", agentmem.NotesOp{Operation: "overwrite", Content: "a\x00b"}, agentmem.EINVALID},
		{"NegativeVersion", agentmem.NotesOp{Operation: "overwrite", ExpectedVersion: &neg}, agentmem.EINVALID},
		{"TooLarge", agentmem.NotesOp{Operation: "overwrite", Content: strings.Repeat("x", agentmem.MaxNotesBytes+1)}, agentmem.ETOOLARGE},
		{"OK", agentmem.NotesOp{Operation: "overwrite", Content: strings.Repeat("x", agentmem.MaxNotesBytes)}, ""},
		{"ReadIgnoresVersion", agentmem.NotesOp{Operation: "read", ExpectedVersion: new(int64(7))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := agentmem.ErrorCode(tc.op.Validate()); got != tc.code {
				t.Fatalf("code=%q, want %q", got, tc.code)
			}
		})
	}
}

func TestNotes_Next(t *testing.T) {
	now := time.Date(2025, 5, 21, 12, 0, 0, 0, time.UTC)
	cur := &agentmem.Notes{UserID: "alice", AgentID: "planner", Content: "# A\n", Version: 3}
	got, err := cur.Next(agentmem.NotesOp{Operation: "append", Content: "b", ExpectedVersion: new(int64(3))}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := &agentmem.Notes{UserID: "alice", AgentID: "planner", Content: "# A\n\nb", Version: 4, Operation: "append", UpdatedAt: now}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}

	_, err = cur.Next(agentmem.NotesOp{Operation: "append", Content: "b", ExpectedVersion: new(int64(2))}, now)
	if agentmem.ErrorCode(err) != agentmem.ECONFLICT || !strings.Contains(agentmem.ErrorMessage(err), "version 3, not the expected version 2") {
		t.Fatalf("stale expected version: %v", err)
	}
	if _, err := cur.Next(agentmem.NotesOp{Operation: "read"}, now); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Fatalf("read: %v, want invalid", err)
	}
	op := agentmem.NotesOp{}
	if err := op.Validate(); err != nil || op.Operation != agentmem.NotesRead {
		t.Fatalf("the default operation is %q (%v), want read", op.Operation, err)
	}
	none := &agentmem.Notes{UserID: "alice", AgentID: "planner"}
	if got, err := none.Next(agentmem.NotesOp{Operation: "overwrite", Content: "x", ExpectedVersion: new(int64(0))}, now); err != nil || got.Version != 1 {
		t.Fatalf("first write expecting version 0: %+v, %v", got, err)
	}
}
