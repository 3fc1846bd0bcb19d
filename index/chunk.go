package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/prompt"
)

// contextSeqs is how far before and after a range the indexer reads to
// find each turn's agentmem.Window neighbours: enough for tool and system
// messages between turns.
const contextSeqs = 4 * agentmem.Window

// ReadTurns returns the turns (agentmem.Message.IsTurn) of a thread with
// seqs from..to, in order; to 0 reads through the thread's last message,
// however many are appended meanwhile.
func ReadTurns(ctx context.Context, store agentmem.MessageStore, userID, threadID string, from, to int64) ([]*agentmem.Message, error) {
	var turns []*agentmem.Message
	for after := max(from, 1) - 1; to == 0 || after < to; {
		f := agentmem.MessageFilter{AfterSeq: after, Limit: agentmem.MaxPageSize}
		if to > 0 {
			f.BeforeSeq = to + 1
		}
		page, _, err := store.FindMessages(ctx, userID, threadID, f)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			if m.IsTurn() {
				turns = append(turns, m)
			}
		}
		after = page[len(page)-1].Seq
	}
	return turns, nil
}

// indexWindows writes the windows (agentmem.WindowText) of the turns of
// seqFrom..seqTo and of the Window turns before them, whose windows the
// new turns complete, and stores their vectors: a message's vector embeds
// its window, as full-text search indexes it.
func (ix *Indexer) indexWindows(ctx context.Context, th *agentmem.Thread, seqFrom, seqTo int64) error {
	turns, err := ReadTurns(ctx, ix.Store, th.UserID, th.ID, seqFrom-contextSeqs, seqTo+contextSeqs)
	if err != nil {
		return err
	}
	texts := make([]string, len(turns))
	first := len(turns)
	for i, m := range turns {
		texts[i] = EmbedText(m)
		if m.Seq >= seqFrom && first == len(turns) {
			first = i
		}
	}
	var ws []agentmem.MessageWindow
	var ids []string
	var own []int // the index in turns of each window's message
	for i := max(0, first-agentmem.Window); i < len(turns) && turns[i].Seq <= seqTo; i++ {
		w := agentmem.MessageWindow{Seq: turns[i].Seq}
		from, to := agentmem.WindowTurns(len(turns), i)
		for _, m := range turns[from:to] {
			w.Turns = append(w.Turns, m.Seq)
		}
		ws, ids, own = append(ws, w), append(ids, turns[i].ID), append(own, i)
	}
	emb, space := ix.bulk()
	// A static table's vector of a window is its turns' sums added up
	// (see minilm.Static.Sums): each turn is read once, not in each of
	// the five windows it is part of.
	sums, _ := emb.(summer)
	var turnSums [][]float32
	if sums != nil && len(ws) > 0 {
		from, _ := agentmem.WindowTurns(len(turns), own[0])
		_, to := agentmem.WindowTurns(len(turns), own[len(own)-1])
		part, err := sums.Sums(ctx, texts[from:to])
		if err != nil {
			return fmt.Errorf("embed messages: %w", err)
		}
		turnSums = make([][]float32, len(turns))
		copy(turnSums[from:], part)
	}
	for start := 0; start < len(ws); start += agentmem.MaxPageSize {
		batch := ws[start:min(start+agentmem.MaxPageSize, len(ws))]
		if err := ix.Store.PutMessageWindows(ctx, th.UserID, th.ID, batch); err != nil {
			return err
		}
		if emb == nil {
			continue
		}
		var vecs [][]float32
		if turnSums != nil {
			vecs = windowSums(turnSums, own[start:start+len(batch)])
		} else {
			wt := make([]string, len(batch))
			for i := range batch {
				wt[i] = agentmem.WindowText(texts, own[start+i])
			}
			var err error
			if vecs, err = emb.Embed(ctx, wt); err != nil {
				return fmt.Errorf("embed messages: %w", err)
			}
			if len(vecs) != len(wt) {
				return fmt.Errorf("embed messages: %d vectors for %d texts", len(vecs), len(wt))
			}
		}
		vs := make([]agentmem.Vector, len(vecs))
		for i, v := range vecs {
			vs[i] = agentmem.Vector{Scope: agentmem.ScopeMessages, ID: ids[start+i], Space: space, Vec: v}
		}
		if err := ix.Store.PutVectors(ctx, th.UserID, vs); err != nil {
			return err
		}
	}
	return nil
}

// summer is an embedder whose vector of a text is its Sums normalised,
// the sum of lines joined the sum of the lines' sums (minilm.Static).
type summer interface {
	Sums(ctx context.Context, texts []string) ([][]float32, error)
}

// windowSums returns the vectors of the windows of turns[own[k]], from the
// turns' sums: each window's turns added up, its own twice, normalised.
func windowSums(turnSums [][]float32, own []int) [][]float32 {
	dim := len(turnSums[own[0]])
	all := make([]float32, len(own)*dim)
	vecs := make([][]float32, len(own))
	for k, i := range own {
		v := all[k*dim : (k+1)*dim : (k+1)*dim]
		from, to := agentmem.WindowTurns(len(turnSums), i)
		for j := from; j < to; j++ {
			for d, f := range turnSums[j] {
				v[d] += f
			}
		}
		for d, f := range turnSums[i] {
			v[d] += f
		}
		agentmem.Unit(v)
		vecs[k] = v
	}
	return vecs
}

// chunkWords bounds an extractive chunk summary.
const chunkWords = 60

// indexChunks writes the thread's next chunks: one for every
// ChunkTurns turns after its last chunk, and, when the thread has ended,
// one for the turns left over.
func (ix *Indexer) indexChunks(ctx context.Context, th *agentmem.Thread) error {
	k := cmp.Or(ix.ChunkTurns, agentmem.DefaultChunkTurns)
	last, err := ix.Store.LastChunkEnd(ctx, th.UserID, th.ID)
	if err != nil {
		return err
	}
	turns, err := ReadTurns(ctx, ix.Store, th.UserID, th.ID, last+1, th.LastSeq)
	if err != nil {
		return err
	}
	var out []*agentmem.Chunk
	for len(turns) >= k || len(turns) > 0 && th.Status == agentmem.ThreadEnded {
		n := min(k, len(turns))
		c, err := ix.makeChunk(ctx, th, turns[:n])
		if err != nil {
			return err
		}
		out, turns = append(out, c), turns[n:]
	}
	if len(out) == 0 {
		return nil
	}
	if err := ix.Store.PutChunks(ctx, th.UserID, out); err != nil {
		return err
	}
	emb, space := ix.bulk()
	if emb == nil {
		return nil
	}
	var texts []string
	var vs []agentmem.Vector
	for _, c := range out {
		texts = append(texts, c.Text, c.Summary)
		vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeChunks, ID: c.ID, Space: space},
			agentmem.Vector{Scope: agentmem.ScopeChunks, ID: c.ID + agentmem.SummaryVectorSuffix, Space: space})
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed chunks: %w", err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("embed chunks: %d vectors for %d texts", len(vecs), len(texts))
	}
	for i := range vs {
		vs[i].Vec = vecs[i]
	}
	return ix.Store.PutVectors(ctx, th.UserID, vs)
}

// makeChunk flattens turns into a chunk (agentmem.ChunkText, which the
// store sets again from the same turns) with its summary, topics and
// entities (by ix.Describer).
func (ix *Indexer) makeChunk(ctx context.Context, th *agentmem.Thread, turns []*agentmem.Message) (*agentmem.Chunk, error) {
	c := &agentmem.Chunk{
		ThreadID:  th.ID,
		SeqFrom:   turns[0].Seq,
		SeqTo:     turns[len(turns)-1].Seq,
		Turns:     len(turns),
		Text:      agentmem.ChunkText(turns),
		CreatedAt: turns[len(turns)-1].CreatedAt,
	}
	var d ChunkDescriber = HeuristicDescriber{Summarize: ix.Summarize}
	if ix.Describer != nil {
		d = ix.Describer
	}
	// Behind on indexing: the model's description gives way to its
	// fallback (see Indexer.ShedBacklog).
	if md, ok := d.(*ModelChunkDescriber); ok && ix.shedding(ctx) {
		d = md.Fallback
		if d == nil {
			d = HeuristicDescriber{}
		}
	}
	desc, err := d.DescribeChunk(ctx, turns)
	if err != nil {
		return nil, fmt.Errorf("describe chunk: %w", err)
	}
	c.Summary, c.Topics, c.Entities = prompt.Truncate(desc.Summary, agentmem.MaxChunkBytes), desc.Topics, desc.Entities
	return c, nil
}

// Topics returns at most n keywords of turns: the content words (four
// letters or more, not stop words) they repeat most, first seen first
// among equals. The topics of a chunk without a model.
func Topics(turns []*agentmem.Message, n int) []string {
	count := map[string]int{}
	var order []string
	for _, m := range turns {
		for _, w := range strings.FieldsFunc(strings.ToLower(m.Content), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if utf8.RuneCountInString(w) < 4 || topicStopWords[w] || agentmem.IsStopWord(w) {
				continue
			}
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w]++
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	return order[:min(n, len(order))]
}

// topicStopWords are frequent conversational words that name no topic.
var topicStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`also really just like know think thanks thank good great well much many yeah sure
		that's it's i'm you're would could should going want make made sounds awesome amazing glad hope right time
		things thing something anything everything always never still even lots love feel feeling totally definitely`) {
		m[w] = true
	}
	return m
}()

// EmbedSummary stores the vector of a thread's summary (scope summaries,
// the thread's ID), replacing the previous version's; a window.Summarizer
// calls it with each summary it stores.
func (ix *Indexer) EmbedSummary(ctx context.Context, s *agentmem.Summary) error {
	if ix == nil || ix.Emb == nil {
		return nil
	}
	vecs, err := ix.Emb.Embed(ctx, []string{s.Text})
	if err != nil {
		return fmt.Errorf("embed summary: %w", err)
	}
	if len(vecs) != 1 {
		return fmt.Errorf("embed summary: %d vectors for 1 text", len(vecs))
	}
	return ix.Store.PutVectors(ctx, s.UserID, []agentmem.Vector{{Scope: agentmem.ScopeSummaries, ID: s.ThreadID, Space: ix.Space, Vec: vecs[0]}})
}
