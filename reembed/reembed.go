// Package reembed moves a store to a new embedder: the jobs that find the
// users with vectors of another space and give each of their searchable
// items a vector in the current one, with the text the index job embeds.
package reembed

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
)

// Kinds of the jobs that move a store to a new embedder.
const (
	// JobKind re-embeds one user's searchable items in the current vector
	// space and then deletes the user's vectors of other spaces.
	JobKind = "reembed"
	// AllJobKind walks every user and enqueues a reembed job for each one
	// that has vectors of a space other than the current one.
	AllJobKind = "reembed-all"
)

// SystemUser is the user of the jobs that concern every user (a job
// belongs to a user). Its ID is reserved (agentmem.ReservedIDPrefix): no
// client can reach it, nor erase its jobs.
const SystemUser = agentmem.ReservedIDPrefix + "agentmem"

// Defaults of Reembedder's zero fields.
const (
	DefaultBatch    = 128 // texts per Embed call
	DefaultAttempts = 20  // a reembed job keeps its progress: a failed run resumes it
)

// Passes over a user's threads and memories (see ReembedUser), and the
// slack allowed between the clocks of the stores' writers and ours.
const (
	reembedPasses = 4
	clockSlack    = time.Minute
)

// reembedPayload is the payload of both job kinds: the space to embed in.
// A server whose embedder writes another space leaves the job alone.
type reembedPayload struct {
	Space string `json:"space"`
}

// Reembedder moves a store to a new embedder: vectors of different spaces
// are never compared, so when the embedder changes (another model, or
// another dimension), every searchable item needs a vector in the new
// space before search finds it by similarity again; meanwhile full-text
// search still finds it.
type Reembedder struct {
	Store interface {
		agentmem.ThreadStore
		agentmem.MessageStore
		agentmem.ChunkStore
		agentmem.SummaryStore
		agentmem.MemoryStore
		agentmem.VectorStore
		agentmem.UserStore
	}
	Jobs  agentmem.JobStore
	Emb   agentmem.Embedder
	Space string // the vector space of Emb
	// Bulk, when set, embeds messages and chunks instead of Emb (as
	// index.Indexer.Bulk).
	Bulk *agentmem.Embedding
	Log  *slog.Logger
	// BatchSize is the number of texts per Embed call (DefaultBatch when
	// 0).
	BatchSize int
	// Now returns the current time (time.Now when nil).
	Now func() time.Time
}

// UserJob returns a job that embeds what a user's items lack a vector for
// (after an import, say: exports hold no vectors), in the space of the
// embedder of the server that runs it, whichever it is: an import by the
// command line, which has no embedder, stores it for the next server.
func UserJob() *agentmem.Job {
	return &agentmem.Job{Kind: JobKind, Key: "any", Payload: json.RawMessage(`{}`), MaxAttempts: DefaultAttempts}
}

// EnqueueAll enqueues the job that looks for users to re-embed (call it
// at start). Servers starting together with the same embedder share one
// job.
func (r *Reembedder) EnqueueAll(ctx context.Context) error {
	payload, _ := json.Marshal(reembedPayload{Space: r.spacesKey()})
	if _, err := r.Jobs.EnqueueJob(ctx, &agentmem.Job{UserID: SystemUser, Kind: AllJobKind, Key: r.spacesKey(), Payload: payload}); err != nil {
		return fmt.Errorf("enqueue reembed-all job: %w", err)
	}
	return nil
}

// RunAll is the reembed-all job's handler (a worker.Handler): it enqueues
// a reembed job for each user with vectors of a space other than
// r.Space (and Bulk's). Users are visited in ID order, one VectorSpaces
// call each.
func (r *Reembedder) RunAll(ctx context.Context, j *agentmem.Job) error {
	p, err := r.payload(j)
	if err != nil || p.Space != r.spacesKey() {
		return err
	}
	ours := r.spaces()
	users := 0
	for after := ""; ; {
		ids, err := r.Store.FindUserIDs(ctx, after, agentmem.MaxPageSize)
		if err != nil {
			return err
		}
		for _, id := range ids {
			spaces, err := r.Store.VectorSpaces(ctx, id)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(spaces, func(s string) bool { return !slices.Contains(ours, s) }) {
				continue
			}
			_, err = r.Jobs.EnqueueJob(ctx, &agentmem.Job{UserID: id, Kind: JobKind, Key: r.spacesKey(),
				Payload: j.Payload, MaxAttempts: DefaultAttempts})
			if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
				continue // erased since it was listed
			} else if err != nil {
				return fmt.Errorf("enqueue reembed job: %w", err)
			}
			users++
		}
		if len(ids) < agentmem.MaxPageSize {
			break
		}
		after = ids[len(ids)-1]
	}
	if users > 0 {
		r.log().InfoContext(ctx, "the embedder changed: re-embedding users", "space", r.spacesKey(), "users", users)
	}
	return nil
}

// Run is the reembed job's handler (a worker.Handler): ReembedUser for
// the job's user.
func (r *Reembedder) Run(ctx context.Context, j *agentmem.Job) error {
	p, err := r.payload(j)
	if err != nil || p.Space != r.spacesKey() {
		return err
	}
	return r.ReembedUser(ctx, j.UserID)
}

func (r *Reembedder) payload(j *agentmem.Job) (reembedPayload, error) {
	var p reembedPayload
	err := json.Unmarshal(j.Payload, &p)
	if err == nil && p.Space == "" && j.Kind == JobKind {
		p.Space = r.spacesKey() // a user's job for whichever embedder runs it (see UserJob)
	}
	if err != nil || p.Space == "" {
		return p, agentmem.Errorf(agentmem.EINVALID, "%s job %s has a malformed payload.", j.Kind, j.ID)
	}
	if p.Space != r.spacesKey() {
		r.log().Info("job for another embedder left alone", agentmem.LogJob, j.ID, agentmem.LogKind, j.Kind, "space", p.Space, "ours", r.spacesKey())
	}
	return p, nil
}

// ReembedUser embeds in r.Space every searchable item of the user that
// has no vector there yet, with the text index.Indexer embeds: of each
// thread that is not deleted, its turns (user and assistant messages with
// content: their window, agentmem.WindowText of their index.EmbedText), its
// chunks (text and summary) and its summary; and every memory,
// invalidated ones too (its Text). Then it deletes the user's vectors of
// every other space. A new scope of vectors must be taught here, or its
// vectors are lost with the old space.
//
// Vectors are stored batch by batch, so a run that fails resumes where
// the last one stopped; a text the embedder refuses (EINVALID: too long
// for the model) is skipped and logged. Threads and memories are listed
// newest updated first, so one updated during a pass may move ahead of
// it: later passes visit what was updated since the previous pass began,
// until one finds nothing to embed (at most a few passes; items written
// meanwhile get their vectors from the indexer, which embeds in r.Space
// too).
func (r *Reembedder) ReembedUser(ctx context.Context, userID string) error {
	have, err := r.vectorKeys(ctx, userID)
	if err != nil {
		return err
	}
	b := &reembedBatch{r: r, userID: userID, have: have}
	var since *time.Time
	for pass := 0; pass < reembedPasses; pass++ {
		start := r.now().Add(-clockSlack)
		before := b.queued
		if err := r.memories(ctx, b, since); err != nil {
			return err
		}
		if err := r.threads(ctx, b, since); err != nil {
			return err
		}
		if err := b.flush(ctx); err != nil {
			return err
		}
		if pass > 0 && b.queued == before {
			break
		}
		since = &start
	}
	spaces, err := r.Store.VectorSpaces(ctx, userID)
	if err != nil {
		return err
	}
	ours := r.spaces()
	for _, space := range spaces {
		if !slices.Contains(ours, space) {
			if err := r.Store.DeleteVectorSpace(ctx, userID, space); err != nil {
				return err
			}
		}
	}
	r.log().InfoContext(ctx, "user re-embedded", agentmem.LogUser, userID, "space", r.spacesKey(), "embedded", b.embedded, "skipped", b.skipped)
	return nil
}

// bulkScopes are the scopes that Bulk embeds, when set.
var bulkScopes = []string{agentmem.ScopeMessages, agentmem.ScopeChunks}

// embedding returns the embedder and space of a scope's items.
func (r *Reembedder) embedding(scope string) (agentmem.Embedder, string) {
	if r.Bulk != nil && slices.Contains(bulkScopes, scope) {
		return r.Bulk.Embedder, r.Bulk.Space
	}
	return r.Emb, r.Space
}

// spaces returns the spaces r embeds in: Space, and Bulk's.
func (r *Reembedder) spaces() []string {
	if r.Bulk != nil {
		return []string{r.Space, r.Bulk.Space}
	}
	return []string{r.Space}
}

// spacesKey names the spaces r embeds in, for its jobs: a server whose
// embedders embed in others leaves them alone.
func (r *Reembedder) spacesKey() string {
	return strings.Join(slices.Compact(r.spaces()), "+")
}

// vectorKeys returns the scope/id of the user's items with a vector in
// the space their scope is embedded in.
func (r *Reembedder) vectorKeys(ctx context.Context, userID string) (map[string]bool, error) {
	have := map[string]bool{}
	for _, space := range slices.Compact(r.spaces()) {
		vs, err := r.Store.FindVectors(ctx, userID, space, nil)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if _, s := r.embedding(v.Scope); s == space {
				have[v.Scope+"/"+v.ID] = true
			}
		}
	}
	return have, nil
}

// memories queues the user's memories (valid or not) updated after since
// (all when nil) that lack a vector.
func (r *Reembedder) memories(ctx context.Context, b *reembedBatch, since *time.Time) error {
	f := agentmem.MemoryFilter{IncludeInvalid: true, UpdatedAfter: since, Limit: agentmem.MaxPageSize}
	for {
		page, next, err := r.Store.FindMemories(ctx, b.userID, f)
		if err != nil {
			return err
		}
		for _, m := range page {
			if err := b.add(ctx, agentmem.ScopeMemories, m.ID, m.Text); err != nil {
				return err
			}
		}
		if f.Cursor = next; next == "" {
			return nil
		}
	}
}

// threads queues what lacks a vector of the user's threads updated after
// since (all when nil).
func (r *Reembedder) threads(ctx context.Context, b *reembedBatch, since *time.Time) error {
	f := agentmem.ThreadFilter{Limit: agentmem.MaxPageSize}
	for {
		page, next, err := r.Store.FindThreads(ctx, b.userID, f)
		if err != nil {
			return err
		}
		for _, th := range page {
			if since != nil && th.UpdatedAt.Before(*since) {
				return nil // newest first: the rest were visited
			}
			err := r.thread(ctx, b, th.ID)
			if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
				continue // deleted meanwhile
			} else if err != nil {
				return err
			}
		}
		if f.Cursor = next; next == "" {
			return nil
		}
	}
}

// thread queues the turns, chunks and summary of a thread that lack a
// vector. A turn's window needs the turns around it, so all of the
// thread's turns are read.
func (r *Reembedder) thread(ctx context.Context, b *reembedBatch, threadID string) error {
	turns, err := index.ReadTurns(ctx, r.Store, b.userID, threadID, 1, 0)
	if err != nil {
		return err
	}
	texts := make([]string, len(turns))
	for i, m := range turns {
		texts[i] = index.EmbedText(m)
	}
	for i, m := range turns {
		if !b.have[agentmem.ScopeMessages+"/"+m.ID] {
			if err := b.add(ctx, agentmem.ScopeMessages, m.ID, agentmem.WindowText(texts, i)); err != nil {
				return err
			}
		}
	}
	chunks, err := r.Store.FindChunks(ctx, b.userID, threadID)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if err := b.add(ctx, agentmem.ScopeChunks, c.ID, c.Text); err != nil {
			return err
		}
		if err := b.add(ctx, agentmem.ScopeChunks, c.ID+agentmem.SummaryVectorSuffix, c.Summary); err != nil {
			return err
		}
	}
	sum, err := r.Store.FindSummary(ctx, b.userID, threadID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	return b.add(ctx, agentmem.ScopeSummaries, threadID, sum.Text)
}

// reembedBatch collects the items to embed and stores their vectors a
// batch at a time.
type reembedBatch struct {
	r      *Reembedder
	userID string
	have   map[string]bool // scope/id of the items with a vector in their space
	items  []agentmem.Vector
	texts  []string

	queued, embedded, skipped int
}

// add queues the text of an item unless it has a vector, or it is empty
// (which no embedder takes).
func (b *reembedBatch) add(ctx context.Context, scope, id, text string) error {
	key := scope + "/" + id
	if b.have[key] || text == "" {
		return nil
	}
	b.have[key] = true
	b.queued++
	_, space := b.r.embedding(scope)
	b.items = append(b.items, agentmem.Vector{Scope: scope, ID: id, Space: space})
	b.texts = append(b.texts, text)
	if len(b.texts) >= cmp.Or(b.r.BatchSize, DefaultBatch) {
		return b.flush(ctx)
	}
	return nil
}

// flush embeds the batch and stores its vectors. When the embedder
// refuses the batch (EINVALID: a text too long for the model), each text
// is embedded alone and those it refuses are skipped and logged, so that
// one text does not hold back a whole user.
func (b *reembedBatch) flush(ctx context.Context) error {
	if len(b.texts) == 0 {
		return nil
	}
	items, texts := b.items, b.texts
	b.items, b.texts = nil, nil
	// Items of each space apart, each by its embedder.
	for _, space := range slices.Compact(b.r.spaces()) {
		var its []agentmem.Vector
		var ts []string
		for i := range items {
			if items[i].Space == space {
				its, ts = append(its, items[i]), append(ts, texts[i])
			}
		}
		if len(its) == 0 {
			continue
		}
		emb, _ := b.r.embedding(its[0].Scope)
		if err := b.embed(ctx, emb, its, ts); err != nil {
			return err
		}
	}
	return nil
}

// embed embeds texts with emb and stores them as items' vectors.
func (b *reembedBatch) embed(ctx context.Context, emb agentmem.Embedder, items []agentmem.Vector, texts []string) error {
	vecs, err := emb.Embed(ctx, texts)
	if agentmem.ErrorCode(err) == agentmem.EINVALID {
		var kept []agentmem.Vector
		for i := range texts {
			v, err := emb.Embed(ctx, texts[i:i+1])
			if agentmem.ErrorCode(err) == agentmem.EINVALID {
				b.skipped++
				b.r.log().WarnContext(ctx, "item not re-embedded: the embedder refused it", agentmem.LogUser, b.userID, "scope", items[i].Scope, "id", items[i].ID, agentmem.LogErr, err)
				continue
			} else if err != nil {
				return fmt.Errorf("re-embed: %w", err)
			}
			items[i].Vec = v[0]
			kept = append(kept, items[i])
		}
		items, err = kept, nil
	} else if err != nil {
		return fmt.Errorf("re-embed: %w", err)
	} else {
		for i := range items {
			items[i].Vec = vecs[i]
		}
	}
	if len(items) == 0 {
		return nil
	}
	if err := b.r.Store.PutVectors(ctx, b.userID, items); err != nil {
		return err
	}
	b.embedded += len(items)
	return nil
}

func (r *Reembedder) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reembedder) log() *slog.Logger { return agentmem.LoggerOr(r.Log) }
