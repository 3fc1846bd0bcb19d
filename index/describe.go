package index

import (
	"context"
	"embed"
	"log/slog"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/entity"
	"github.com/agentmem/agentmem/prompt"
)

// ChunkDescription is what a chunk is about: its summary, topics and
// entities.
type ChunkDescription struct {
	Summary  string   `json:"summary"`
	Topics   []string `json:"topics"`
	Entities []string `json:"entities"`
}

// ChunkDescriber describes a chunk's turns.
type ChunkDescriber interface {
	DescribeChunk(ctx context.Context, turns []*agentmem.Message) (ChunkDescription, error)
}

// HeuristicDescriber describes a chunk without a model: its summary by
// Summarize (none when nil), its topics by Topics and its entities by
// entity.Names.
type HeuristicDescriber struct {
	Summarize func(ctx context.Context, turns []*agentmem.Message) (string, error)
}

// DescribeChunk implements ChunkDescriber.
func (d HeuristicDescriber) DescribeChunk(ctx context.Context, turns []*agentmem.Message) (ChunkDescription, error) {
	done := agentmem.BackgroundCPU(ctx)
	desc := ChunkDescription{Topics: Topics(turns, MaxTopics), Entities: entity.Names(turns, maxEntities)}
	done()
	if d.Summarize != nil {
		s, err := d.Summarize(ctx, turns)
		if err != nil {
			return desc, err
		}
		desc.Summary = s
	}
	return desc, nil
}

// The labels of a chunk (and MaxTopics and MaxLabelChars those of a
// thread's reflection too).
const (
	MaxTopics       = 5
	maxEntities     = 10
	MaxLabelChars   = 100
	chunkModelWords = 60
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

var chunkPrompt = template.Must(template.ParseFS(promptFS, "prompts/chunk.tmpl"))

// ChunkPrompt renders the prompt that asks a model to describe turns.
func ChunkPrompt(turns []*agentmem.Message) (string, error) {
	data := struct {
		Turns    []prompt.Turn
		MaxWords int
	}{MaxWords: chunkModelWords}
	for _, m := range turns {
		data.Turns = append(data.Turns, prompt.Turn{Seq: m.Seq, Role: m.Role, Name: m.Name, Content: prompt.Cut(m.Content, prompt.MaxTurnChars)})
	}
	var b strings.Builder
	if err := chunkPrompt.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ModelChunkDescriber asks a chat model for a chunk's summary, topics and
// entities (one JSON object), validated as extract.ModelExtractor
// validates its answers. When the model fails (it is down, or refused)
// or its answer is malformed (not JSON, or not the object asked for),
// Fallback describes the chunk and a warning is logged: a description is
// optional work (indexing sheds it when behind), so the index job goes on
// rather than being retried, or dead, for it.
type ModelChunkDescriber struct {
	Chat     agentmem.Chat
	Model    string
	Log      *slog.Logger
	Fallback ChunkDescriber // HeuristicDescriber{} when nil
}

// DescribeChunk implements ChunkDescriber.
func (d *ModelChunkDescriber) DescribeChunk(ctx context.Context, turns []*agentmem.Message) (ChunkDescription, error) {
	prompt, err := ChunkPrompt(turns)
	if err != nil {
		return ChunkDescription{}, err
	}
	resp, err := d.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     d.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: prompt}},
		MaxTokens: 1024,
		JSON:      true,
	})
	what := "chunk model failed"
	if err == nil {
		var desc ChunkDescription
		if desc, err = parseChunkDescription(resp.Content); err == nil {
			return desc, nil
		}
		what = "chunk model's answer malformed"
	}
	if ctx.Err() != nil {
		return ChunkDescription{}, ctx.Err()
	}
	log := agentmem.LoggerOr(d.Log)
	log.WarnContext(ctx, what+"; describing heuristically", agentmem.LogThread, turns[0].ThreadID, "seq_from", turns[0].Seq, agentmem.LogErr, err)
	var fb ChunkDescriber = HeuristicDescriber{}
	if d.Fallback != nil {
		fb = d.Fallback
	}
	return fb.DescribeChunk(ctx, turns)
}

// parseChunkDescription validates a model's description: a non-empty
// summary (cut to MaxChunkBytes), and lists of strings; labels are
// trimmed, cut, deduplicated and capped.
func parseChunkDescription(content string) (ChunkDescription, error) {
	var answer struct {
		Summary  *string   `json:"summary"`
		Topics   *[]string `json:"topics"`
		Entities *[]string `json:"entities"`
	}
	if err := prompt.DecodeJSON(content, &answer); err != nil {
		return ChunkDescription{}, err
	}
	if answer.Summary == nil || strings.TrimSpace(*answer.Summary) == "" || !utf8.ValidString(*answer.Summary) {
		return ChunkDescription{}, prompt.Malformed(`no "summary"`)
	}
	labels := func(in *[]string, n int) []string {
		out := []string{}
		if in == nil {
			return out
		}
		for _, l := range *in {
			l = prompt.Cut(strings.TrimSpace(l), MaxLabelChars)
			if l != "" && utf8.ValidString(l) && agentmem.ValidateText("label", l) == nil && !slices.Contains(out, l) && len(out) < n {
				out = append(out, l)
			}
		}
		return out
	}
	return ChunkDescription{
		Summary:  prompt.Truncate(strings.TrimSpace(*answer.Summary), agentmem.MaxChunkBytes),
		Topics:   labels(answer.Topics, MaxTopics),
		Entities: labels(answer.Entities, maxEntities),
	}, nil
}
