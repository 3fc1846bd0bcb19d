package agentmem

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// What search looks through (the scopes of a search request) and the
// kinds of the vectors and full-text entries the stores keep.
const (
	ScopeMemories  = "memories"  // Memory.Text
	ScopeMessages  = "messages"  // Message.Content (user and assistant turns)
	ScopeChunks    = "chunks"    // Chunk.Text, Summary, Topics and Entities: k turns flattened
	ScopeSummaries = "summaries" // a thread's newest summary; its ID is the thread's
)

// validateScope checks that scope is one of the scopes; field names it in
// the error.
func validateScope(field, scope string) error {
	switch scope {
	case ScopeMemories, ScopeMessages, ScopeChunks, ScopeSummaries:
		return nil
	}
	return Errorf(EINVALID, "%s must be %s, %s, %s or %s, not %q.", field, ScopeMemories, ScopeMessages, ScopeChunks, ScopeSummaries, scope)
}

// ValidateTextScope checks a scope of full-text search: every scope is
// indexed.
func ValidateTextScope(scope string) error { return validateScope("scope", scope) }

// Vector is an embedding of one item of a user: a memory, a message…
// Space names the embedder and its dimension ("lexical-v1/256",
// "openai/text-embedding-3-small/1536"): vectors of different spaces are
// never compared.
type Vector struct {
	Scope string    `json:"scope"` // ScopeMemories, ScopeMessages…
	ID    string    `json:"id"`    // the item's ID (a message's ID, not its seq)
	Space string    `json:"space"`
	Vec   []float32 `json:"vec"` // L2-normalised
}

// Unit scales v to unit length, as a Vector's Vec is (a zero vector stays
// zero).
func Unit(v []float32) {
	var ss float64
	for _, f := range v {
		ss += float64(f) * float64(f)
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for i, f := range v {
			v[i] = f * inv
		}
	}
}

// MaxVectorDimensions bounds the length of one vector.
const MaxVectorDimensions = 8192

// VectorStore stores embeddings. Exact search over one user's vectors is
// done in Go (package retrieve), which keeps it fast at any number of
// users and needs no database extension.
//
// Vectors are deleted with their item: DeleteMemory deletes a memory's,
// permanent thread deletion (DeleteThread, DeleteThreadsBefore) its
// messages', chunks' and summary's, DeleteUser all of the user's.
// Soft-deleting a thread keeps them; FindItems leaves its items out.
type VectorStore interface {
	// PutVectors stores vectors of the user, replacing those of the same
	// scope, ID and space (the last one wins within vs). The items they
	// embed are not looked up. All the vectors of a space have one
	// dimension. Returns EINVALID for an empty space, an unknown scope, a
	// bad ID, an empty or too long vector, a NaN or infinite value, or a
	// dimension other than that of the space's vectors (see
	// PrepareVectors). Vectors are stored quantised to 8 bits per
	// dimension: each comes back from FindVectors within max|v|/254 of
	// what was put in every dimension (a cosine between unit vectors moves
	// by at most about 1/127), in a quarter of float32's bytes or less.
	PutVectors(ctx context.Context, userID string, vs []Vector) error

	// FindVectors returns all the user's vectors of a space in the given
	// scopes (all scopes when empty), in no particular order; an empty
	// slice when there are none. Returns EINVALID for an empty space.
	FindVectors(ctx context.Context, userID, space string, scopes []string) ([]Vector, error)

	// VectorsVersion returns a value that changes whenever the user's
	// vectors of a space change (put, replaced or deleted with their
	// item), so that a cache of them knows when it is stale. It must be
	// cheap: it is read before every search. The value is opaque and never
	// repeats, not even after DeleteUser; while the user has never had
	// vectors of the space (or was erased since), each call returns a new
	// value, so that nothing is ever served from a cache of nothing.
	VectorsVersion(ctx context.Context, userID, space string) (string, error)

	// VectorsState returns how far the user's vectors of a space have
	// come, so that a cache of them can catch up by reading only what was
	// put since (FindVectorsSince). As cheap as VectorsVersion. While the
	// user has no vectors of the space, each call returns a new Version
	// and Epoch, and Seq 0.
	VectorsState(ctx context.Context, userID, space string) (VectorsState, error)

	// FindVectorsSince returns the user's vectors of a space, in all
	// scopes and in no particular order, that were put after the write
	// numbered seq (a VectorsState's Seq): those put or replaced since. It
	// does not report deletions; a deletion moves ResetSeq. Returns
	// EINVALID for an empty space.
	FindVectorsSince(ctx context.Context, userID, space string, seq int64) ([]Vector, error)

	// VectorSpaces returns the spaces in which the user has vectors, in
	// ascending byte order; an empty slice when there are none. A space
	// whose vectors were all deleted (with their items, or by
	// DeleteVectorSpace) is not listed.
	VectorSpaces(ctx context.Context, userID string) ([]string, error)

	// DeleteVectorSpace deletes all the user's vectors of a space, in
	// every scope (once they are re-embedded in another space), and
	// nothing of other spaces or users; the space's VectorsVersion then
	// changes. Deleting a space without vectors is not an error. Returns
	// EINVALID for an empty space.
	DeleteVectorSpace(ctx context.Context, userID, space string) error
}

// VectorsState is where a user's vectors of a space stand. A cache loaded
// at state c is up to date with state s after reading FindVectorsSince(c.Seq)
// when it has the same Epoch, c.Seq ≥ s.ResetSeq (nothing was deleted
// since) and c.Seq ≤ s.Seq; otherwise it must reload everything.
type VectorsState struct {
	Version  string // as VectorsVersion: changes with every write
	Epoch    string // names the write counter; a new one when it restarts (after the user's erasure)
	Seq      int64  // the writes (puts and deletions) of the space so far
	ResetSeq int64  // the Seq of the newest deletion (0: none)
}

// CanCatchUp reports whether a cache loaded at state c can catch up with
// state s by reading the vectors put since c.Seq.
func (c VectorsState) CanCatchUp(s VectorsState) bool {
	return c.Epoch == s.Epoch && c.Seq >= s.ResetSeq && c.Seq <= s.Seq
}

// PrepareVectors checks a PutVectors batch and returns it ready to store,
// for every backend: without duplicates (the last of a scope, ID and space
// wins) and sorted by space, scope and ID, the order in which a backend
// that locks rows takes its locks. dims maps each space of the batch to
// the dimension of its vectors. Returns EINVALID as PutVectors.
func PrepareVectors(vs []Vector) (out []Vector, dims map[string]int, err error) {
	type key struct{ space, scope, id string }
	last := make(map[key]int, len(vs))
	dims = map[string]int{}
	for i, v := range vs {
		if err := ValidateSpace(v.Space); err != nil {
			return nil, nil, err
		}
		if err := validateScope("scope", v.Scope); err != nil {
			return nil, nil, err
		}
		if err := ValidateID("id", v.ID); err != nil {
			return nil, nil, err
		}
		switch {
		case len(v.Vec) == 0:
			return nil, nil, Errorf(EINVALID, "Vector %s/%s is empty.", v.Scope, v.ID)
		case len(v.Vec) > MaxVectorDimensions:
			return nil, nil, Errorf(EINVALID, "Vector %s/%s has %d dimensions; the limit is %d.", v.Scope, v.ID, len(v.Vec), MaxVectorDimensions)
		}
		for _, x := range v.Vec {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, nil, Errorf(EINVALID, "Vector %s/%s holds NaN or infinity.", v.Scope, v.ID)
			}
		}
		if d, ok := dims[v.Space]; ok && d != len(v.Vec) {
			return nil, nil, Errorf(EINVALID, "Vectors of space %q have %d and %d dimensions; a space has one.", v.Space, d, len(v.Vec))
		}
		dims[v.Space] = len(v.Vec)
		last[key{v.Space, v.Scope, v.ID}] = i
	}
	out = make([]Vector, 0, len(last))
	for i, v := range vs {
		if last[key{v.Space, v.Scope, v.ID}] == i {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b Vector) int {
		return cmp.Or(strings.Compare(a.Space, b.Space), strings.Compare(a.Scope, b.Scope), strings.Compare(a.ID, b.ID))
	})
	return out, dims, nil
}

// ValidateSpace checks a vector space's name: 1 to MaxIDBytes bytes of
// text without control characters (slashes allowed: "openai/…/1536").
func ValidateSpace(space string) error {
	switch {
	case space == "":
		return Errorf(EINVALID, "space is required.")
	case len(space) > MaxIDBytes:
		return Errorf(EINVALID, "space is longer than %d bytes.", MaxIDBytes)
	case !utf8.ValidString(space) || strings.ContainsFunc(space, unicode.IsControl):
		return Errorf(EINVALID, "space must be text without control characters.")
	}
	return nil
}

// VectorDimensionsError is the error of a vector whose dimension is not
// that of the vectors already stored in its space.
func VectorDimensionsError(space string, stored, got int) error {
	return Errorf(EINVALID, "Space %q holds vectors of %d dimensions, not %d.", space, stored, got)
}

// TextQuery asks the store's full-text index for candidates.
type TextQuery struct {
	Query  string   // words; the store stems them and ORs them, best match first (see SearchTerms)
	Scopes []string // ScopeMemories, ScopeMessages, ScopeChunks, ScopeSummaries (memories and messages when empty)
	Limit  int      // at most this many hits (DefaultPageSize when 0, at most MaxPageSize)
	Filter SearchFilter
}

// Prepare checks q and fills in its defaults, for every backend: both
// scopes when none is given (duplicates removed), DefaultPageSize when
// Limit is 0. It returns the query's search terms (see SearchTerms); none
// means no hits. Returns EINVALID for an unknown scope, a bad limit or a
// time out of range.
func (q *TextQuery) Prepare() ([]string, error) {
	limit, err := PageSize(q.Limit)
	if err != nil {
		return nil, err
	}
	q.Limit = limit
	if len(q.Scopes) == 0 {
		q.Scopes = []string{ScopeMemories, ScopeMessages}
	}
	var scopes []string
	for _, sc := range q.Scopes {
		if err := ValidateTextScope(sc); err != nil {
			return nil, err
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	q.Scopes = scopes
	for _, t := range []struct {
		field string
		t     *time.Time
	}{{"since", q.Filter.Since}, {"until", q.Filter.Until}} {
		if t.t != nil {
			if err := ValidateTime(t.field, *t.t); err != nil {
				return nil, err
			}
		}
	}
	return SearchTerms(q.Query), nil
}

// MaxSearchTerms bounds the words of a full-text query that are searched;
// the rest are ignored.
const MaxSearchTerms = 32

// SearchTerms returns the words of a full-text query, for every backend:
// lower-cased, split at every character that is not a letter or a digit
// (as SQLite's unicode61 tokenizer splits text, so "don't" is "don" and
// "t"; PostgreSQL's parser splits most text there too, but keeps e-mail
// addresses, URLs, paths and decimal numbers whole, which their parts do
// not match), without single ASCII letters, without English stop words
// (PostgreSQL's english list: "the", "what", "did"…, which a question is
// full of and which match nearly every message), without duplicates, in
// order, at most MaxSearchTerms. The stores stem the terms and OR them;
// each term is quoted, so no query syntax (quotes, NEAR, *, -, :) reaches
// the index.
func SearchTerms(q string) []string {
	var terms []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		r, n := utf8.DecodeRuneInString(w)
		switch {
		case n == len(w) && r < utf8.RuneSelf && unicode.IsLetter(r), len(w) > maxTermBytes, stopWords[w], slices.Contains(terms, w):
			continue
		}
		if terms = append(terms, w); len(terms) == MaxSearchTerms {
			break
		}
	}
	return terms
}

// maxTermBytes bounds a search term: a longer "word" is not a word
// (PostgreSQL ignores words of more than 2047 characters).
const maxTermBytes = 200

// IsStopWord reports whether w, lower-cased, is one of the English stop
// words that full-text queries leave out.
func IsStopWord(w string) bool { return stopWords[w] }

// stopWords are PostgreSQL's english stop words (the Snowball list), left
// out of queries on both backends.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves what which who whom
		this that these those am is are was were be been being have has had having do does did doing a an the and
		but if or because as until while of at by for with about against between into through during before after
		above below to from up down in out on off over under again further then once here there when where why how
		all any both each few more most other some such no nor not only own same so than too very s t can will just
		don should now`) {
		m[w] = true
	}
	return m
}()

// SearchFilter narrows a search. Nil fields do not filter. Match states
// what each field means.
type SearchFilter struct {
	AgentID        *string    // a memory's agent; a message's thread's agent
	ThreadID       *string    // a message's thread; a memory's provenance
	Category       *string    // memories only: messages have none, so no message passes
	Since, Until   *time.Time // Since ≤ CreatedAt < Until
	IncludeInvalid bool       // memories: also invalidated ones
	// MemoryKind keeps the memories of one kind (MemoryFact or
	// MemoryInsight); unlike Category, it lets the other scopes' items
	// pass, so that one search finds insights and chunks.
	MemoryKind *string
}

// Match reports whether a hit passes f: what SearchText applies in the
// index and FindItems to the items it finds.
func (f SearchFilter) Match(h TextHit) bool {
	switch {
	case f.AgentID != nil && h.AgentID != *f.AgentID,
		f.ThreadID != nil && h.ThreadID != *f.ThreadID,
		f.Category != nil && (h.Scope != ScopeMemories || h.Category != *f.Category),
		f.MemoryKind != nil && h.Scope == ScopeMemories && h.MemoryKind != *f.MemoryKind,
		f.Since != nil && h.CreatedAt.Before(Timestamp(*f.Since)), // in the stores' precision, as they compare
		f.Until != nil && !h.CreatedAt.Before(Timestamp(*f.Until)),
		!f.IncludeInvalid && h.InvalidAt != nil:
		return false
	}
	return true
}

// TextHit is one full-text candidate, best first. Score is the backend's
// relevance, higher is better: SQLite's -bm25() (positive, unbounded),
// PostgreSQL's ts_rank (positive, usually below 1). Scores are
// comparable within one result list only, and a list over both scopes
// merges two indexes' scores: fuse by rank, not by score.
//
// AgentID, Category, MemoryKind and InvalidAt are what SearchFilter.Match
// needs besides.
type TextHit struct {
	Scope      string     `json:"scope"`
	ID         string     `json:"id"`
	Score      float64    `json:"score"`
	Text       string     `json:"text"`
	ThreadID   string     `json:"thread_id,omitempty"`
	SeqFrom    int64      `json:"seq_from,omitempty"` // a message: its seq; a memory: its provenance
	SeqTo      int64      `json:"seq_to,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	AgentID    string     `json:"agent_id,omitempty"`    // a memory's agent; a message's thread's agent
	Category   string     `json:"category,omitempty"`    // memories only
	MemoryKind string     `json:"memory_kind,omitempty"` // memories only: MemoryFact or MemoryInsight
	InvalidAt  *time.Time `json:"invalid_at,omitempty"`  // memories only: set when invalidated
	Importance float64    `json:"importance,omitempty"`  // memories only
	Role       string     `json:"role,omitempty"`        // messages only: user or assistant
	Name       string     `json:"name,omitempty"`        // messages only: the author's name, when the message has one
}

// SearchScopes runs search over each of q's scopes at once (a store's
// TextSearcher.SearchText: over a long history the messages' and the
// memories' searches cost about the same) and returns the best q.Limit
// of their hits, ordered by SortHits. A scope other than memories is
// left out when q filters by category (only memories have one). The
// first error, in scope order, is returned.
func SearchScopes(q TextQuery, search func(scope string) ([]TextHit, error)) ([]TextHit, error) {
	found := make([][]TextHit, len(q.Scopes))
	errs := make([]error, len(q.Scopes))
	var wg sync.WaitGroup
	for i, scope := range q.Scopes {
		if q.Filter.Category != nil && scope != ScopeMemories {
			continue
		}
		wg.Go(func() { found[i], errs[i] = search(scope) })
	}
	wg.Wait()
	hits := []TextHit{}
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		hits = append(hits, found[i]...)
	}
	SortHits(hits)
	return hits[:min(len(hits), q.Limit)], nil
}

// SortHits orders hits best first: by score, descending, then by scope
// and ID, so that equal scores come in a stable order.
func SortHits(hits []TextHit) {
	slices.SortStableFunc(hits, func(a, b TextHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Scope, b.Scope), strings.Compare(a.ID, b.ID))
	})
}

// FilterItems returns the items of FindItems that pass f, in the order of
// ids, each once, for every backend.
func FilterItems(items []TextHit, ids []string, f SearchFilter) []TextHit {
	byID := make(map[string]TextHit, len(items))
	for _, h := range items {
		byID[h.ID] = h
	}
	out := make([]TextHit, 0, len(items))
	for _, id := range ids {
		if h, ok := byID[id]; ok && f.Match(h) {
			out = append(out, h)
		}
		delete(byID, id)
	}
	return out
}

// TextSearcher is a store's full-text index.
//
// What is indexed: every memory's Text (invalidated ones too; SearchText
// leaves them out unless IncludeInvalid); the Content of user and
// assistant messages (not tool or system messages), replaced by the
// message's window once ChunkStore.PutMessageWindows wrote it; chunks'
// Text, Summary, Topics and Entities; every version of thread summaries (SearchText keeps
// each thread's newest). Items of soft-deleted threads stay indexed but
// are left out of results; permanently deleted ones leave the index with
// them. PostgreSQL indexes the first 100,000 characters of a text (a
// tsvector holds at most 1 MB); SQLite all of it.
type TextSearcher interface {
	// SearchText returns the best full-text candidates of the user for q,
	// best first (see SortHits), at most q.Limit: each scope's best,
	// merged. The terms (see SearchTerms) are stemmed and ORed, so an
	// item need not hold every word, and one holding more of them ranks
	// higher. An empty query (no searchable words) returns no hits.
	// Messages of soft-deleted threads are left out. Returns EINVALID as
	// TextQuery.Prepare.
	SearchText(ctx context.Context, userID string, q TextQuery) ([]TextHit, error)

	// FindItems returns the searchable items of the user by scope and ID
	// that pass f (see SearchFilter.Match), as TextHits with Score 0, in
	// the order of ids: the vector candidates that full-text did not
	// return, filtered as SearchText filters. Unknown IDs are left out,
	// and so are messages that SearchText never returns (of soft-deleted
	// threads, tool and system messages). A summary's ID is its
	// thread's. Returns EINVALID for an unknown scope, or more than
	// MaxPageSize ids.
	FindItems(ctx context.Context, userID, scope string, ids []string, f SearchFilter) ([]TextHit, error)
}

// The kinds of a search by kind (SearchRequest.Kinds): seed 001's
// containers, as fact retrieval chooses among them. A memory of kind
// MemoryFact is of kind memories, one of kind MemoryInsight of kind
// insights.
const (
	KindMemories  = "memories"  // memories of kind fact: what the user said of themselves
	KindInsights  = "insights"  // memories of kind insight: what reflection drew from threads
	KindMessages  = "messages"  // the turns themselves
	KindChunks    = "chunks"    // passages of turns, with summary, topics and entities
	KindSummaries = "summaries" // the threads' summaries
)

// SearchKinds are the kinds of a search by kind, in the order errors list
// them.
var SearchKinds = []string{KindMemories, KindInsights, KindMessages, KindChunks, KindSummaries}

// The number of results of a search (SearchRequest.TopK), whichever face
// asks: REST, MCP or the CLI.
const (
	DefaultTopK = 5 // when a request says none; seed 001's fact retrieval
	MaxTopK     = 100
)

// SearchRequest is a search of one user's memory (retrieve.Searcher).
type SearchRequest struct {
	Query  string   `json:"query"`
	Scopes []string `json:"scopes"` // memories, messages, chunks, summaries (memories and messages when empty)
	// Kinds, instead of Scopes, searches by kind (SearchKinds): insights
	// alone, facts without insights, chunks… Giving both is EINVALID.
	Kinds []string `json:"kinds,omitempty"`
	TopK  int      `json:"top_k"` // DefaultTopK when 0, at most MaxTopK
	// MinScore drops results whose relevance (0 to 1, see
	// SearchResult.Relevance) is lower.
	MinScore float64       `json:"min_score"`
	Filters  SearchFilters `json:"filters"`
	// RecencyHalfLife, when set ("30d", "12h"), multiplies each score by
	// 0.5^(age / half-life), favouring newer items.
	RecencyHalfLife string `json:"recency_half_life"`
	// ImportanceWeight, from 0 (default) to 1, favours important
	// memories: each score is multiplied by 1 − w + w × importance, where
	// importance is a memory's (0 to 1) and 0.5 for items without one
	// (messages, chunks, summaries).
	ImportanceWeight float64 `json:"importance_weight"`
	// Signals limits the signals used: "fulltext", "vector" (both when
	// empty). For evaluations that compare what each part adds.
	Signals []string `json:"signals"`
}

// SearchFilters narrow a search (a SearchRequest); the stores receive
// them as a SearchFilter.
type SearchFilters struct {
	AgentID        *string    `json:"agent_id"`
	ThreadID       *string    `json:"thread_id"`
	Category       *string    `json:"category"`
	Since          *time.Time `json:"since"`
	Until          *time.Time `json:"until"`
	IncludeInvalid bool       `json:"include_invalid"`
}

// SearchResult is one search result with its provenance. Score is the fused
// score scaled to (0, 1]: 1 for an item ranked first by every signal that
// ran; it orders the results but says nothing of their relevance (the
// first of unrelated results scores high). Relevance is the chance,
// from 0 to 1, that the result bears on the query, estimated from its
// own evidence (retrieve.Evidence: the cosine of its vector and the
// query's, the share of the query's words it holds), calibrated on
// labelled data: what min_score compares with. Scores holds each
// signal's own score (fulltext: the store's relevance; vector: the
// cosine similarity), the evidence's coverage, and the factors applied.
type SearchResult struct {
	Kind      string             `json:"kind"` // memory, message, chunk, summary
	ID        string             `json:"id"`
	Text      string             `json:"text"`
	Score     float64            `json:"score"`
	Relevance float64            `json:"relevance"`
	Scores    map[string]float64 `json:"scores"`
	ThreadID  string             `json:"thread_id,omitempty"`
	SeqFrom   int64              `json:"seq_from,omitempty"`
	SeqTo     int64              `json:"seq_to,omitempty"`
	CreatedAt time.Time          `json:"created_at"`
	// InvalidAt, when set, says that the result no longer holds, since
	// then: an invalidated memory (found only with
	// filters.include_invalid), or a message, chunk or summary from
	// which only invalidated memories were drawn, or which names what an
	// invalidated memory drawn from it said (its newest one's
	// invalidation). Such results rank lower: their score is multiplied
	// by Scores["superseded"] (retrieve.DefaultSupersededWeight, 0.5).
	// SupersededBy is the ID of the memory that superseded it (the
	// memory's, or that newest memory's, Memory.SupersededBy; "" when it
	// was ended without a replacement) and SupersededText that memory's
	// text ("" if it was deleted since).
	InvalidAt      *time.Time `json:"invalid_at,omitempty"`
	SupersededBy   string     `json:"superseded_by,omitempty"`
	SupersededText string     `json:"superseded_text,omitempty"`
}

// SearchResponse is the results of a search, best first, and what ran.
type SearchResponse struct {
	Results  []SearchResult `json:"results"`
	Signals  []string       `json:"signals"`  // the signals that contributed
	Warnings []string       `json:"warnings"` // e.g. the embedder was unavailable
}

// FactsResponse answers a question about the user from what search finds
// (seed 001's fact retrieval): with a model, a short answer citing the
// facts by number; without one, the facts themselves, formatted.
type FactsResponse struct {
	Answer string         `json:"answer"`
	Facts  []SearchResult `json:"facts"`
	// Kinds are the kinds of store searched (SearchKinds) when a model
	// chose them; empty when the request's kinds or scopes, or the
	// defaults, decided.
	Kinds    []string `json:"kinds,omitempty"`
	Model    string   `json:"model,omitempty"` // the model that wrote the answer ("" without one)
	Warnings []string `json:"warnings"`
}

// ReplaceWord returns s with each whole-word occurrence of old (any case)
// replaced by new, and whether there was one: "Porto" in "User lives in
// porto." but not in "Portobello".
func ReplaceWord(s, old, new string) (string, bool) {
	if old == "" {
		return s, false
	}
	ls, lo := strings.ToLower(s), strings.ToLower(old)
	var b strings.Builder
	found, i := false, 0
	for {
		j := strings.Index(ls[i:], lo)
		if j < 0 {
			break
		}
		j += i
		k := j + len(lo)
		if (j == 0 || !wordByte(ls[j-1])) && (k == len(ls) || !wordByte(ls[k])) {
			b.WriteString(s[i:j])
			b.WriteString(new)
			found = true
		} else {
			b.WriteString(s[i:k])
		}
		i = k
	}
	if !found {
		return s, false
	}
	b.WriteString(s[i:])
	return b.String(), true
}

func wordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }
