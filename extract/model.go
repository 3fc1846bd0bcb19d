package extract

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"text/template"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

// Extractor proposes candidate memories about a thread's user from new
// turns of the thread. The index job (index.Indexer) consolidates what it
// returns; an error fails the job, which the worker retries.
type Extractor interface {
	Extract(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) ([]Candidate, error)
}

// DefaultCategories are the categories a model files memories under; an
// answer with another category files it under "other".
var DefaultCategories = []string{"identity", "job", "family", "preference", "plan", "possession", "place", "date", "activity", "health", "other"}

// Defaults of ModelExtractor's zero fields.
const (
	DefaultMinConfidence  = 0.5                    // candidates the model is less sure of are dropped
	DefaultMaxPromptChars = prompt.DefaultMaxChars // of turns per model call (about 6,000 tokens)
)

// Limits on what ModelExtractor accepts.
const (
	maxModelMemories = 50 // per answer; the rest are ignored
	maxSlotChars     = 100
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

var extractPrompt = template.Must(template.ParseFS(promptFS, "prompts/extract.tmpl"))

// ModelExtractor asks a chat model for the memories that new turns hold
// (the DESIGN's extraction: a JSON proposal per batch of turns), and
// validates the answer as it would user input:
//
//   - the answer must be one JSON object {"memories": [...]} (a Markdown
//     code fence around it is tolerated) whose memories each have a text
//     and a numeric confidence; numbers must be numbers, and any other
//     shape is malformed: nothing of the answer is kept, and Fallback
//     extracts the batch instead, with a warning;
//   - values are clamped to [0, 1], an unknown category becomes "other",
//     candidates below MinConfidence are dropped;
//   - each candidate's provenance is the turn the model cites ("seq"), if
//     that turn is in the batch, else the batch's range of seqs.
//
// When the model itself fails (Chat returns an error after the client's
// retries: the model is down, or refused the request) the batch is
// extracted by Fallback instead and a warning logged, so that what the
// user said is not lost while the model is away. Fallbacks counts both.
type ModelExtractor struct {
	Chat  agentmem.Chat
	Model string // "" for the client's default
	Log   *slog.Logger
	// MinConfidence drops candidates below it (DefaultMinConfidence when 0).
	MinConfidence float64
	// Categories the model chooses from (DefaultCategories when empty).
	Categories []string
	// Fallback extracts when the model fails (HeuristicExtractor when nil).
	Fallback Extractor
	// MaxPromptChars bounds the turns of one model call; more turns make
	// more calls (DefaultMaxPromptChars when 0).
	MaxPromptChars int

	failed, malformed atomic.Int64 // batches extracted by Fallback, by why
}

// Fallbacks returns how many batches Fallback extracted since x was
// made: because the model failed, and because its answer was malformed
// (/metrics: agentmem_extraction_fallbacks_total).
func (x *ModelExtractor) Fallbacks() (failed, malformed int64) {
	return x.failed.Load(), x.malformed.Load()
}

var _ Extractor = (*ModelExtractor)(nil)

// Extract implements Extractor. Turns go to the model in batches of at
// most MaxPromptChars; a batch without a user turn is not sent.
func (x *ModelExtractor) Extract(ctx context.Context, th *agentmem.Thread, msgs []*agentmem.Message) ([]Candidate, error) {
	var out []Candidate
	for _, batch := range x.batches(msgs) {
		cands, err := x.extractBatch(ctx, th, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, cands...)
	}
	return out, nil
}

// batches groups the user and assistant turns with content into batches
// of at most MaxPromptChars, leaving out those without a user turn.
func (x *ModelExtractor) batches(msgs []*agentmem.Message) [][]*agentmem.Message {
	limit := x.MaxPromptChars
	if limit <= 0 {
		limit = DefaultMaxPromptChars
	}
	var out [][]*agentmem.Message
	var cur []*agentmem.Message
	size, user := 0, false
	flush := func() {
		if user {
			out = append(out, cur)
		}
		cur, size, user = nil, 0, false
	}
	for _, m := range msgs {
		if (m.Role != agentmem.RoleUser && m.Role != agentmem.RoleAssistant) || strings.TrimSpace(m.Content) == "" {
			continue
		}
		n := min(len(m.Content), prompt.MaxTurnChars)
		if len(cur) > 0 && size+n > limit {
			flush()
		}
		cur, size = append(cur, m), size+n
		user = user || m.Role == agentmem.RoleUser
	}
	flush()
	return out
}

// ExtractPrompt renders the prompt that asks a model for the memories of
// msgs (user and assistant turns with content; others are left out), with
// the given categories.
func ExtractPrompt(msgs []*agentmem.Message, categories []string) (string, error) {
	data := struct {
		Turns      []prompt.Turn
		Categories string
	}{Categories: strings.Join(categories, ", ")}
	for _, m := range msgs {
		content := strings.TrimSpace(m.Content)
		if (m.Role != agentmem.RoleUser && m.Role != agentmem.RoleAssistant) || content == "" {
			continue
		}
		data.Turns = append(data.Turns, prompt.Turn{Seq: m.Seq, Role: m.Role, Name: m.Name, Content: prompt.Cut(content, prompt.MaxTurnChars)})
	}
	var b strings.Builder
	if err := extractPrompt.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render extraction prompt: %w", err)
	}
	return b.String(), nil
}

func (x *ModelExtractor) extractBatch(ctx context.Context, th *agentmem.Thread, batch []*agentmem.Message) ([]Candidate, error) {
	prompt, err := ExtractPrompt(batch, x.categories())
	if err != nil {
		return nil, err
	}
	resp, err := x.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     x.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: prompt}},
		MaxTokens: 4096,
		JSON:      true,
	})
	if err == nil && strings.TrimSpace(resp.Content) == "" && (resp.FinishReason == "refusal" || resp.FinishReason == "content_filter") {
		err = agentmem.Errorf(agentmem.EUNAVAILABLE, "The extraction model refused the turns (%s).", resp.FinishReason)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // stopping: the job runs again
		}
		x.failed.Add(1)
		x.log().WarnContext(ctx, "extraction model failed; extracting heuristically", agentmem.LogThread, th.ID,
			"seq_from", batch[0].Seq, "seq_to", batch[len(batch)-1].Seq, agentmem.LogErr, err)
		return x.fallback().Extract(ctx, th, batch)
	}
	cands, err := x.parse(resp.Content, batch)
	if err != nil {
		// A model that does not answer in the shape asked for (small
		// local models often do not) would answer so again: the batch is
		// extracted without it rather than retried until the job dies.
		x.malformed.Add(1)
		x.log().WarnContext(ctx, "extraction model answered nonsense; extracting heuristically", agentmem.LogThread, th.ID,
			"seq_from", batch[0].Seq, "seq_to", batch[len(batch)-1].Seq, agentmem.LogErr, err)
		x.log().DebugContext(ctx, "malformed extraction answer", agentmem.LogThread, th.ID, "answer", resp.Content)
		return x.fallback().Extract(ctx, th, batch)
	}
	x.log().DebugContext(ctx, "memories extracted by the model", agentmem.LogThread, th.ID, "candidates", len(cands))
	return cands, nil
}

// modelMemory is one memory of the model's answer. Pointers tell a
// missing field from a zero one.
type modelMemory struct {
	Text       *string  `json:"text"`
	Category   *string  `json:"category"`
	Confidence *float64 `json:"confidence"`
	Importance *float64 `json:"importance"`
	Slot       *string  `json:"slot"`
	Negated    *bool    `json:"negated"`
	Seq        *float64 `json:"seq"`
}

// parse validates the model's answer and turns it into candidates.
func (x *ModelExtractor) parse(content string, batch []*agentmem.Message) ([]Candidate, error) {
	var answer struct {
		Memories *[]modelMemory `json:"memories"`
	}
	if err := prompt.DecodeJSON(content, &answer); err != nil {
		return nil, err
	}
	if answer.Memories == nil {
		return nil, prompt.Malformed(`no "memories" array`)
	}
	seqs := map[int64]bool{}
	for _, m := range batch {
		seqs[m.Seq] = true
	}
	from, to := batch[0].Seq, batch[len(batch)-1].Seq
	minConf := x.MinConfidence
	if minConf <= 0 {
		minConf = DefaultMinConfidence
	}
	categories := x.categories()
	var out []Candidate
	seen := map[string]bool{}
	for i, mm := range *answer.Memories {
		if i == maxModelMemories {
			break
		}
		if mm.Text == nil || strings.TrimSpace(*mm.Text) == "" {
			return nil, prompt.Malformed("memory %d has no text", i)
		}
		if mm.Confidence == nil {
			return nil, prompt.Malformed("memory %d has no confidence", i)
		}
		text := strings.Join(strings.Fields(*mm.Text), " ")
		if len(text) > agentmem.MaxMemoryBytes || agentmem.ValidateText("text", text) != nil {
			return nil, prompt.Malformed("memory %d has a text that cannot be stored", i)
		}
		c := Candidate{Text: text, Category: "other", Confidence: prompt.Clamp(*mm.Confidence), Importance: 0.5, SeqFrom: from, SeqTo: to}
		if mm.Category != nil {
			if cat := strings.ToLower(strings.TrimSpace(*mm.Category)); slices.Contains(categories, cat) {
				c.Category = cat
			}
		}
		if mm.Importance != nil {
			c.Importance = prompt.Clamp(*mm.Importance)
		}
		if mm.Slot != nil {
			slot := strings.ToLower(strings.Join(strings.Fields(*mm.Slot), " "))
			if utf8.RuneCountInString(slot) <= maxSlotChars && agentmem.ValidateText("slot", slot) == nil {
				c.Slot = slot
			}
		}
		if mm.Negated != nil {
			c.Negated = *mm.Negated
		}
		if mm.Seq != nil {
			if s := int64(*mm.Seq); float64(s) == *mm.Seq && seqs[s] {
				c.SeqFrom, c.SeqTo = s, s
			}
		}
		if c.Confidence < minConf || seen[normalize(text)] {
			continue
		}
		seen[normalize(text)] = true
		out = append(out, c)
	}
	return out, nil
}

func (x *ModelExtractor) categories() []string {
	if len(x.Categories) > 0 {
		return x.Categories
	}
	return DefaultCategories
}

func (x *ModelExtractor) fallback() Extractor {
	if x.Fallback != nil {
		return x.Fallback
	}
	return HeuristicExtractor{}
}

func (x *ModelExtractor) log() *slog.Logger { return agentmem.LoggerOr(x.Log) }
