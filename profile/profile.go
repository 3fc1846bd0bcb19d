// Package profile synthesises users' profiles (seed 001's long-term
// reflection): with a model, the previous profile updated with the
// memories not yet built into it; without one, assembled from the user's
// active memories.
package profile

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

// JobKind is the kind of the jobs that synthesise a user's profile
// again.
const JobKind = "profile"

//go:embed prompts/*.tmpl
var promptFS embed.FS

var profilePrompt = template.Must(template.ParseFS(promptFS, "prompts/profile.tmpl"))

// Words bounds a synthesised profile (seed 001: 200–300 words).
const Words = 300

// maxProfileMemories bounds the memories one refresh reads.
const maxProfileMemories = 500

// Profiler synthesises users' profiles (seed 001's long-term reflection).
// With a model, the new profile is the previous one updated with the
// memories not yet built into it (insights and facts, oldest first, the
// newer winning where they contradict); without one, or when the model
// fails, it is assembled from the user's active memories grouped by
// category, most important first, so the default setup has a useful
// profile too. The memories it was built from are then marked processed,
// in the same transaction as the new version.
type Profiler struct {
	Store interface {
		agentmem.MemoryStore
		agentmem.ProfileStore
	}
	Chat  agentmem.Chat // nil: assembled profiles
	Model string
	// Section, when set, names the section of an assembled profile a
	// memory goes under (its Category when nil, or when it returns "");
	// extract.Section suits it.
	Section func(*agentmem.Memory) string
	Log     *slog.Logger
}

// conflictTries bounds the refreshes of one profile job that another
// refresh beats to storing its version.
const conflictTries = 3

// Run is the profile job's handler (a worker.Handler). Another refresh
// that stored a version while this one ran (ECONFLICT: one asked for
// through the API; the jobs of a user run one at a time) may have read
// the memories before the change this job was queued for, so the job
// refreshes again, on top of it.
func (p *Profiler) Run(ctx context.Context, j *agentmem.Job) error {
	_, err := p.RefreshAgain(ctx, j.UserID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil // nothing known about the user yet: no profile to write
	}
	return err // still ECONFLICT: a storm of refreshes; the job is retried after a back-off
}

// RefreshAgain is Refresh, refreshing again on top of the version another
// refresh stored meanwhile (ECONFLICT), up to conflictTries times: for a
// refresh that no caller asked to be of a given version (a job's, the
// API's).
func (p *Profiler) RefreshAgain(ctx context.Context, userID string) (*agentmem.Profile, error) {
	var (
		prof *agentmem.Profile
		err  error
	)
	for range conflictTries {
		prof, err = p.Refresh(ctx, userID)
		if agentmem.ErrorCode(err) != agentmem.ECONFLICT {
			break
		}
	}
	return prof, err
}

// Refresh synthesises the user's profile again and returns the newest
// version; when nothing changed it stores nothing and returns the
// current one. Returns ENOTFOUND when the user has nothing to build a
// profile from and no profile yet, ECONFLICT when another refresh stored
// a version meanwhile.
func (p *Profiler) Refresh(ctx context.Context, userID string) (*agentmem.Profile, error) {
	prev, err := p.Store.FindProfile(ctx, userID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		prev, err = nil, nil
	} else if err != nil {
		return nil, err
	}
	after := 0
	if prev != nil {
		after = prev.Version
	}
	active, err := p.memories(ctx, userID)
	if err != nil {
		return nil, err
	}
	next := &agentmem.Profile{UserID: userID}
	var processed []string
	if p.Chat != nil {
		fresh := slices.DeleteFunc(slices.Clone(active), func(m *agentmem.Memory) bool { return m.ProcessedAt != nil })
		if len(fresh) == 0 && prev != nil {
			return prev, nil
		}
		text, model, err := p.synthesise(ctx, prev, fresh)
		if err == nil {
			next.Text, next.Method, next.Model = text, agentmem.ProfileLLM, model
			for _, m := range fresh {
				next.Sources, processed = append(next.Sources, m.ID), append(processed, m.ID)
			}
			if prev != nil {
				next.Sources = append(slices.Clone(prev.Sources), next.Sources...)
			}
		} else if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || ctx.Err() != nil {
			return nil, err
		} else {
			p.log().WarnContext(ctx, "profile model failed; assembling the profile from memories", agentmem.LogUser, userID, agentmem.LogErr, err)
		}
	}
	if next.Method == "" {
		if len(active) == 0 && prev == nil {
			return nil, agentmem.Errorf(agentmem.ENOTFOUND, "Nothing is known about the user yet: no memories to build a profile from.")
		}
		next.Text, next.Method = Assemble(active, p.Section), agentmem.ProfileAssembled
		for _, m := range active {
			next.Sources = append(next.Sources, m.ID)
			if m.ProcessedAt == nil {
				processed = append(processed, m.ID)
			}
		}
		if prev != nil && prev.Method == agentmem.ProfileAssembled && prev.Text == next.Text {
			return prev, nil
		}
	}
	if len(next.Sources) > agentmem.MaxPageSize*10 {
		next.Sources = next.Sources[len(next.Sources)-agentmem.MaxPageSize*10:]
	}
	if err := p.Store.PutProfile(ctx, next, after, processed); err != nil {
		return nil, err
	}
	return next, nil
}

// memories returns the user's active memories, oldest updated first, at
// most maxProfileMemories (the newest).
func (p *Profiler) memories(ctx context.Context, userID string) ([]*agentmem.Memory, error) {
	var out []*agentmem.Memory
	f := agentmem.MemoryFilter{Limit: agentmem.MaxPageSize}
	for len(out) < maxProfileMemories {
		page, next, err := p.Store.FindMemories(ctx, userID, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if f.Cursor = next; next == "" {
			break
		}
	}
	slices.Reverse(out) // FindMemories is newest first
	return out, nil
}

// synthesise asks the model for the profile: the previous one updated with
// memories.
func (p *Profiler) synthesise(ctx context.Context, prev *agentmem.Profile, memories []*agentmem.Memory) (string, string, error) {
	type item struct{ When, Category, Text string }
	data := struct {
		Baseline string
		Memories []item
		MaxWords int
	}{MaxWords: Words}
	if prev != nil {
		data.Baseline = prev.Text
	}
	for _, m := range memories {
		data.Memories = append(data.Memories, item{m.UpdatedAt.Format("2006-01-02"), cmp.Or(m.Category, m.Kind), m.Text})
	}
	var b strings.Builder
	if err := profilePrompt.Execute(&b, data); err != nil {
		return "", "", fmt.Errorf("render profile prompt: %w", err)
	}
	resp, err := p.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     p.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: b.String()}},
		MaxTokens: Words * 3,
	})
	if err != nil {
		return "", "", err
	}
	text := strings.TrimSpace(resp.Content)
	if text == "" {
		return "", "", agentmem.Errorf(agentmem.EUNAVAILABLE, "The model answered with an empty profile.")
	}
	return prompt.Truncate(text, agentmem.MaxProfileBytes), resp.Model, nil
}

// Assemble writes a profile from memories without a model: a section per
// category, in the order of a life (who the user is, where they live,
// their work, family, health…; then any other), each memory once, the
// newest first, with the day it was learned, so that a reader tells the
// present from what was said before ("User lives in Dunedin.
// (2026-02-03)" below "User said: writing from my new villa in
// Christchurch. (2026-10-12)"); a memory that no longer holds is not
// among memories. section, when not nil, names a memory's section
// (its Category when nil or "").
func Assemble(memories []*agentmem.Memory, section func(*agentmem.Memory) string) string {
	byCat := map[string][]*agentmem.Memory{}
	for _, m := range memories {
		c := m.Category
		if section != nil {
			c = cmp.Or(section(m), c)
		}
		c = cmp.Or(c, "other")
		byCat[c] = append(byCat[c], m)
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	rank := func(c string) int {
		if i := slices.Index(lifeOrder, c); i >= 0 {
			return i
		}
		return len(lifeOrder)
	}
	slices.SortFunc(cats, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) })
	var b strings.Builder
	for _, c := range cats {
		ms := byCat[c]
		slices.SortStableFunc(ms, func(x, y *agentmem.Memory) int {
			return cmp.Or(y.ValidFrom.Compare(x.ValidFrom), cmp.Compare(y.Importance, x.Importance))
		})
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		r, size := utf8.DecodeRuneInString(c)
		fmt.Fprintf(&b, "%s%s:\n", string(unicode.ToUpper(r)), c[size:])
		seen := map[string]bool{}
		for _, m := range ms {
			if t := strings.TrimSpace(m.Text); !seen[t] {
				seen[t] = true
				fmt.Fprintf(&b, "- %s (%s)\n", t, m.ValidFrom.UTC().Format(time.DateOnly))
			}
		}
	}
	return prompt.Truncate(strings.TrimSuffix(b.String(), "\n"), agentmem.MaxProfileBytes)
}

// lifeOrder is the order of an assembled profile's sections: the
// categories of extraction (extract's and the model's prompt), who the
// user is first; categories it does not name come after, alphabetically.
var lifeOrder = []string{"identity", "place", "job", "family", "health", "preference", "activity", "possession", "plan", "date",
	"fact", "event", "other"}

func (p *Profiler) log() *slog.Logger { return agentmem.LoggerOr(p.Log) }
