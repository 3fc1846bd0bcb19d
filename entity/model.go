package entity

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

// Types are the types a model files entities under; an answer with
// another type files it under "other".
var Types = []string{"workflow", "project", "account", "tool", "product", "document", "person", "pet", "place", "organization", "event", "other"}

// maxModelEntities bounds the entities of one answer; the rest are
// ignored.
const maxModelEntities = 30

//go:embed prompts/*.tmpl
var promptFS embed.FS

var entitiesPrompt = template.Must(template.ParseFS(promptFS, "prompts/entities.tmpl"))

// Mention is an entity that turns mention, as a model reads them: its
// name, type and other names, what a turn says was done with it, and the
// last turn that says so.
type Mention struct {
	Entity *agentmem.Entity
	Action string
	Seq    int64

	candidate *candidate // what Indexer.Index makes of it
}

// Prompt renders the prompt that asks a model for the entities of turns
// (user and assistant turns with content).
func Prompt(turns []*agentmem.Message) (string, error) {
	data := struct {
		Turns []prompt.Turn
		Max   int
		Types string
	}{Max: maxModelEntities, Types: strings.Join(Types, ", ")}
	for _, m := range turns {
		if m.IsTurn() {
			data.Turns = append(data.Turns, prompt.Turn{Seq: m.Seq, Role: m.Role, Name: m.Name, Content: prompt.Cut(strings.TrimSpace(m.Content), prompt.MaxTurnChars)})
		}
	}
	var b strings.Builder
	if err := entitiesPrompt.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render entities prompt: %w", err)
	}
	return b.String(), nil
}

// ModelExtractor asks a chat model for the entities that turns mention
// (one JSON object), and validates the answer as user input: each entity
// as agentmem.Entity.Validate checks it (entries that fail are dropped),
// its type one of Types ("other" otherwise), its action one of the three
// ("discussed" otherwise), its seq one of the turns' (the last turn's
// otherwise). A malformed answer is an EUNAVAILABLE error.
type ModelExtractor struct {
	Chat  agentmem.Chat
	Model string // "" for the client's default
}

// Extract returns the entities of turns of the user's thread.
func (x *ModelExtractor) Extract(ctx context.Context, userID string, turns []*agentmem.Message) ([]Mention, error) {
	prompt, err := Prompt(turns)
	if err != nil {
		return nil, err
	}
	resp, err := x.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     x.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: prompt}},
		MaxTokens: 2048,
		JSON:      true,
	})
	if err != nil {
		return nil, err
	}
	return parseMentions(resp.Content, userID, turns)
}

// parseMentions validates a model's answer (see ModelExtractor).
func parseMentions(content, userID string, turns []*agentmem.Message) ([]Mention, error) {
	var answer struct {
		Entities *[]struct {
			Name    string   `json:"name"`
			Type    string   `json:"type"`
			Aliases []string `json:"aliases"`
			Action  string   `json:"action"`
			Seq     int64    `json:"seq"`
		} `json:"entities"`
	}
	if err := prompt.DecodeJSON(content, &answer); err != nil {
		return nil, err
	}
	if answer.Entities == nil {
		return nil, prompt.Malformed(`no "entities"`)
	}
	seqs := map[int64]bool{}
	var last int64
	for _, m := range turns {
		if m.IsTurn() {
			seqs[m.Seq], last = true, max(last, m.Seq)
		}
	}
	out := []Mention{}
	for _, a := range *answer.Entities {
		if len(out) == maxModelEntities {
			break
		}
		typ := strings.ToLower(strings.TrimSpace(a.Type))
		if !slices.Contains(Types, typ) {
			typ = "other"
		}
		aliases := a.Aliases
		if len(aliases) > agentmem.MaxEntityAliases {
			aliases = aliases[:agentmem.MaxEntityAliases]
		}
		var kept []string
		for _, al := range aliases {
			if agentmem.EntityKey(al) != "" && len(al) <= agentmem.MaxEntityNameBytes && agentmem.ValidateText("aliases", al) == nil {
				kept = append(kept, al)
			}
		}
		e := &agentmem.Entity{UserID: userID, Name: a.Name, Type: typ, Aliases: kept}
		if e.Validate() != nil {
			continue // no name, or not one
		}
		mention := Mention{Entity: e, Action: a.Action, Seq: a.Seq}
		if agentmem.ValidateEntityAction(mention.Action) != nil {
			mention.Action = agentmem.EntityDiscussed
		}
		if !seqs[mention.Seq] {
			mention.Seq = last
		}
		out = append(out, mention)
	}
	return out, nil
}

// modelMentions returns the model's mentions of turns when x has a
// model, and reports whether it asked it; when the model fails or answers
// badly, a warning is logged and the heuristics take over (false). Turns
// whose words name nothing (no capitalised word inside a sentence: see
// Names) are not sent, which spares a model call for most chat; the
// user's entities they mention by a lower-case alias are found without
// the model.
func (x *Indexer) modelMentions(ctx context.Context, th *agentmem.Thread, turns []*agentmem.Message) ([]Mention, bool, error) {
	if x.Chat == nil || !namesSomething(turns) {
		return nil, false, nil
	}
	mx := &ModelExtractor{Chat: x.Chat, Model: x.Model}
	ms, err := mx.Extract(ctx, th.UserID, turns)
	if err == nil {
		return ms, true, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	log := agentmem.LoggerOr(x.Log)
	log.WarnContext(ctx, "entity model failed; finding entities heuristically", agentmem.LogThread, th.ID, agentmem.LogErr, err)
	return nil, false, nil
}

// namesSomething reports whether the content of turns has a proper noun
// (Names, leaving out the speakers' names).
func namesSomething(turns []*agentmem.Message) bool {
	anon := make([]*agentmem.Message, len(turns))
	for i, m := range turns {
		anon[i] = &agentmem.Message{Content: m.Content}
	}
	return len(Names(anon, 1)) > 0
}
