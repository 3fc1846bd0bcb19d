// Package retrieve is agentmem's hybrid search: full-text candidates from
// the store (SQLite FTS5 BM25, PostgreSQL tsvector) and vector candidates
// from an exact cosine scan of the user's vectors in Go, fused by
// reciprocal rank, with optional recency decay.
package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Limits and defaults of a search.
const (
	DefaultTopK     = agentmem.DefaultTopK // one default for every face: REST, MCP, the CLI
	MaxTopK         = agentmem.MaxTopK
	MaxQueryBytes   = 4 << 10
	DefaultMinScore = 0
)

// Store is what the searcher reads.
type Store interface {
	agentmem.TextSearcher
	agentmem.VectorStore
	// What tells results that no longer hold (see outdated).
	FindMemorySources(ctx context.Context, userID string, ranges []agentmem.ThreadRange) ([]agentmem.MemorySource, error)
	FindMemoryByID(ctx context.Context, userID, id string) (*agentmem.Memory, error)
}

// VectorWeightLexical is the VectorWeight for the built-in lexical
// embedder. On LoCoMo's dev file (docs/benchmarks.md) Recall@5 fell from
// full-text alone as the weight rose: 0.1 kept it (0.639 against 0.636),
// 1 cost 0.06.
const VectorWeightLexical = 0.1

// VectorWeightStatic is the weight, as VectorWeightLexical's, of the
// vectors of the built-in model's static table (minilm.Static), which
// embed messages and chunks by default. On LoCoMo's dev file
// (docs/benchmarks.md), over messages, Recall@5 was 0.683 at 0.1, 0.664
// at 0.3 and 0.654 at 0.5 (the lexical embedder at 0.1: 0.673).
const VectorWeightStatic = 0.1

// VectorWeightModel is the weight of the built-in model's vectors
// (minilm.Embedder: memories and summaries by default). On LoCoMo's dev
// file over messages and memories (docs/benchmarks.md), Recall@5 was
// 0.606 at 1, 0.673 at 0.3 and 0.683 at 0.1: the model ranks memories
// whose turns are seldom the evidence. 0.3 keeps Recall@5 at the lexical
// embedder's (0.675) and Recall@10 above it, while a memory that shares
// no word with the question but its meaning still reaches the results
// when full-text finds few.
const VectorWeightModel = 0.3

// DefaultSupersededWeight is the SupersededWeight when 0: a result that
// no longer holds keeps half its score. Fused scores are close together
// (rank 1 of a list adds 1/61, rank 50 1/110), so halving one moves it
// below nearly every candidate that still holds, yet keeps it in the
// results when few others match (a question about the past).
const DefaultSupersededWeight = 0.5

// DefaultSpeakerWeight is the SpeakerWeight when 0: a message whose
// author the query names ("What desserts has Maria made?" and Maria's own
// turns) scores a fifth more. On LoCoMo's dev file (docs/benchmarks.md)
// five in six evidence turns are the named speaker's, yet two in five of
// the turns found were the other's; 1.1 to 1.4 all raised Recall@5 by
// 0.035–0.037, 1.2 the most at 10.
const DefaultSpeakerWeight = 1.2

// DefaultQuestionWeight is the QuestionWeight when 0: a message that ends
// in a question scores a tenth less. A question rarely holds the fact
// asked about; its answer does, and the question's window (which holds
// the answer's words, see agentmem.WindowText) otherwise ranks it as
// high. On LoCoMo's dev file a quarter of all turns end in a question,
// but an eighth of the evidence; 0.9 raised Recall@5 by 0.01, 0.8 lowered it.
const DefaultQuestionWeight = 0.9

// Options configure a Searcher; the zero value works.
type Options struct {
	// Candidates is how many candidates each signal contributes before
	// fusion (default 50, and at least 5 × top_k).
	Candidates int
	// CacheBytes bounds the in-process cache of users' vectors (default
	// 256 MiB; negative disables it).
	CacheBytes int64
	// VectorWeight weighs the vector signal against full-text (weight 1)
	// in the fusion: 1 when 0. An embedder that captures meaning (a
	// model's) deserves 1; the built-in embedder, lexical like full-text
	// but without its IDF, adds mostly noise at 1 and serves best as a
	// nudge (at 0.1, its first moves an item up about six places of
	// full-text near the top) and a net for what full-text misses (see
	// VectorWeightLexical).
	VectorWeight float64
	// SupersededWeight multiplies the score of a result that no longer
	// holds: an invalidated memory (found with filters.include_invalid),
	// and a message, chunk or summary from which only invalidated
	// memories were drawn, or which names what one of them said (see
	// outdated). DefaultSupersededWeight when 0;
	// 1 keeps their rank (they are still marked).
	SupersededWeight float64
	// SpeakerWeight multiplies the score of a message whose author the
	// query names: its Name, a word of the query (case aside), or, for a
	// message of role user without a name, the word "user" ("what does
	// the user eat?"). DefaultSpeakerWeight when 0; 1 turns it off.
	SpeakerWeight float64
	// QuestionWeight multiplies the score of a message that ends in a
	// question mark. DefaultQuestionWeight when 0; 1 turns it off.
	QuestionWeight float64
	// OwnWordsWeight, when more than the vector signal's weight, is its
	// weight in a search where full-text missed the question's own words
	// (see missedOwnWords): its hits then match a name, or nothing, and
	// the meaning should decide. 0 leaves the weights as they are.
	// DefaultOwnWordsWeight suits a model's vectors.
	OwnWordsWeight float64
	// Expand, when set with ExpandWeight, returns words near a word of the
	// query in meaning ("desserts": cake, pastries, pudding…): the
	// candidates of either signal that hold the near words of the query's
	// words that the best full-text hits lack score in the full-text list
	// as if those words were terms of the query that weigh ExpandWeight
	// (see withNearWords), so that "What desserts has Maria made?" ranks
	// "I baked a cake", found by its vector, among full-text's hits, and
	// a turn with the query's words and a near word above one with the
	// words alone. The query's words with a capital (names) and "user"
	// are not expanded. minilm.NearWords
	// (the built-in model's) suits it, with DefaultExpandWeight.
	Expand       func(word string) ([]string, error)
	ExpandWeight float64
	// Admit, when set, is called by each search, once its request is
	// valid, before any work: an error refuses the search with it, and
	// release is called once the search is done. Serve bounds the
	// searches that run at once with it (core.Admitter).
	Admit func(ctx context.Context) (release func(), err error)
	// Bulk, when set, is the embedding of messages and chunks (as the
	// indexer's, index.Indexer.Bulk), the query's other one: a search of
	// both embeds the query in each space, and ranks each space's nearest
	// vectors apart: two lists of the vector signal in the fusion, each
	// with its weight (cosines of two spaces are not comparable).
	Bulk *agentmem.Embedding
	// BulkVectorWeight weighs Bulk's vector signal as VectorWeight
	// weighs the other's (VectorWeight when 0).
	BulkVectorWeight float64
	// Intent, when set, names the category of memories a query asks about
	// ("where does she live these days?": place) and how sure it is of it
	// (0..1); a memory of that category scores IntentWeight times more
	// when it is sure at least to IntentMin. extract.Learned.Intent (the
	// slot classifier learned from the labelled corpus) suits it.
	Intent func(ctx context.Context, query string) (category string, p float64, err error)
	// OwnNames, when set, returns the user's own names (first name,
	// nickname, the name the assistant calls them by): in a query they
	// mean the user, and are searched as "they" ("what does Chloe do
	// now?" is not a search for the turns and memories that say "Chloe":
	// the assistant's "Enjoy the trip, Chloe!", "User's name is
	// Chloe."), though the turns the user wrote under the name still
	// weigh as theirs (SpeakerWeight), and the memories that say the name
	// are left out of the results. The searcher keeps them for a minute
	// (namesTTL).
	OwnNames func(ctx context.Context, userID string) ([]string, error)
	// Calibrations, by vector space, estimate the results' relevance
	// (see Calibration) for spaces the built-in
	// Calibrations lack (another embedder's), or to override them; ""
	// names those of results without a vector in a calibrated space.
	Calibrations map[string]Calibration
	// IntentWeight multiplies the score of a memory of the query's
	// intent; DefaultIntentWeight when 0.
	IntentWeight float64
	// IntentMin is the certainty from which the intent weighs;
	// DefaultIntentMin when 0.
	IntentMin float64
	Log       *slog.Logger
}

// Defaults of Options' intent.
const (
	DefaultIntentWeight = 1.5
	DefaultIntentMin    = 0.5
)

// Searcher runs searches. It is safe for concurrent use.
type Searcher struct {
	store Store
	emb   agentmem.Embedder
	space string
	opt   Options
	cache *vectorCache
	names namesCache
}

// New returns a searcher over store. emb embeds queries in the vector
// space named space (the one the indexer embeds items in); a nil emb
// searches full-text only.
func New(store Store, emb agentmem.Embedder, space string, opt Options) *Searcher {
	opt.Log = agentmem.LoggerOr(opt.Log)
	return &Searcher{store: store, emb: emb, space: space, opt: opt, cache: newVectorCache(cmp.Or(opt.CacheBytes, 256<<20))}
}

// Warm loads the user's vectors into the searcher's cache, as the user's
// first search would: serve warms its users after a start, so that no
// first search pays for the load (half a second for 100,000 messages;
// docs/benchmarks.md). It returns false when the cache is full, or holds
// nothing (no embedder, or no cache): warming more users would only evict
// those warmed before.
func (s *Searcher) Warm(ctx context.Context, userID string) (bool, error) {
	if s.emb == nil || s.cache.max <= 0 {
		return false, nil
	}
	for _, e := range s.embeddings(nil) {
		if _, err := s.cache.get(ctx, s.store, userID, e.Space); err != nil {
			return false, err
		}
	}
	return !s.cache.full(), nil
}

// Forget drops what the searcher keeps in memory of the user (the cache of
// their vectors, of every space, and their own names): call it once the
// user is erased. Other
// processes' searchers keep theirs until the user's next search there,
// which finds the store's vectors changed (their VectorsState's epoch) and
// reloads them, or until the cache evicts them.
func (s *Searcher) Forget(userID string) {
	s.cache.forget(userID)
	s.names.forget(userID)
}

// The request and result types of a search are the domain's
// (agentmem.SearchRequest…), so that every face and the Go client share
// them.
type (
	Request       = agentmem.SearchRequest
	Filters       = agentmem.SearchFilters
	Result        = agentmem.SearchResult
	Response      = agentmem.SearchResponse
	FactsResponse = agentmem.FactsResponse
)

var kinds = map[string]string{agentmem.ScopeMemories: "memory", agentmem.ScopeMessages: "message", agentmem.ScopeChunks: "chunk",
	agentmem.ScopeSummaries: "summary"}

// validate checks a request and fills in its defaults.
func validate(r *Request) (scopes []string, halfLife time.Duration, err error) {
	r.Query = strings.TrimSpace(r.Query)
	switch {
	case r.Query == "":
		return nil, 0, agentmem.Errorf(agentmem.EINVALID, "query is required.")
	case len(r.Query) > MaxQueryBytes:
		return nil, 0, agentmem.Errorf(agentmem.ETOOLARGE, "query is %d bytes; the limit is %d bytes.", len(r.Query), MaxQueryBytes)
	case !utf8.ValidString(r.Query):
		return nil, 0, agentmem.Errorf(agentmem.EINVALID, "query is not valid UTF-8.")
	case r.TopK < 0 || r.TopK > MaxTopK:
		return nil, 0, agentmem.Errorf(agentmem.EINVALID, "top_k must be between 1 and %d, not %d.", MaxTopK, r.TopK)
	case !(r.MinScore >= 0 && r.MinScore <= 1):
		return nil, 0, agentmem.Errorf(agentmem.EINVALID, "min_score must be between 0 and 1.")
	case !(r.ImportanceWeight >= 0 && r.ImportanceWeight <= 1):
		return nil, 0, agentmem.Errorf(agentmem.EINVALID, "importance_weight must be between 0 and 1.")
	}
	if err := agentmem.ValidateText("query", r.Query); err != nil {
		return nil, 0, err
	}
	r.TopK = cmp.Or(r.TopK, DefaultTopK)
	if scopes, err = requestScopes(r); err != nil {
		return nil, 0, err
	}
	for _, s := range scopes {
		if kinds[s] == "" {
			return nil, 0, agentmem.Errorf(agentmem.EINVALID, "scope %q is not one of memories, messages, chunks, summaries.", s)
		}
	}
	for _, s := range r.Signals {
		if s != "fulltext" && s != "vector" {
			return nil, 0, agentmem.Errorf(agentmem.EINVALID, "signal %q is not fulltext or vector.", s)
		}
	}
	if r.RecencyHalfLife != "" {
		if halfLife, err = agentmem.ParseAge("recency_half_life", r.RecencyHalfLife); err != nil {
			return nil, 0, err
		}
		if halfLife == 0 {
			return nil, 0, agentmem.Errorf(agentmem.EINVALID, "recency_half_life must be longer than 0.")
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(scopes))), halfLife, nil
}

func wants(r *Request, signal string) bool {
	return len(r.Signals) == 0 || slices.Contains(r.Signals, signal)
}

// Search runs a search over the user's data. Returns EINVALID for a bad
// request, and Options.Admit's error when it refuses the search. When the
// embedder fails, it searches full-text only and says so in the
// response's warnings.
func (s *Searcher) Search(ctx context.Context, userID string, req Request) (*Response, error) {
	scopes, halfLife, err := validate(&req)
	if err != nil {
		return nil, err
	}
	if s.opt.Admit != nil {
		release, err := s.opt.Admit(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	var named []string // the user's names the query said
	asked := req.Query // as asked: the authors it names (see namesAuthorOf)
	if s.opt.OwnNames != nil {
		names, err := s.names.get(ctx, userID, s.opt.OwnNames)
		if err != nil {
			return nil, fmt.Errorf("the user's names: %w", err)
		}
		req.Query, named = asUser(req.Query, names)
	}
	n := max(cmp.Or(s.opt.Candidates, 50), 5*req.TopK)
	filter := agentmem.SearchFilter{AgentID: req.Filters.AgentID, ThreadID: req.Filters.ThreadID, Category: req.Filters.Category,
		Since: req.Filters.Since, Until: req.Filters.Until, IncludeInvalid: req.Filters.IncludeInvalid, MemoryKind: memoryKind(req.Kinds)}
	resp := &Response{Results: []Result{}, Signals: []string{}, Warnings: []string{}}
	items := map[itemKey]agentmem.TextHit{}
	var names []string
	var weights []float64
	var lists [][]candidate

	// The two signals run at once: the vector scan, in Go, overlaps the
	// full-text query, in the database.
	var vecLists []weightedList
	var vecErr error
	vecItems := map[itemKey]agentmem.TextHit{}
	var wg sync.WaitGroup
	if wants(&req, "vector") && s.emb != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vecLists, vecErr = s.vectorCandidates(ctx, userID, req.Query, scopes, n, filter, vecItems)
		}()
	}
	var hits []agentmem.TextHit
	if wants(&req, "fulltext") {
		hits, err = s.store.SearchText(ctx, userID, agentmem.TextQuery{Query: req.Query, Scopes: scopes, Limit: n, Filter: filter})
		if err != nil {
			wg.Wait()
			return nil, fmt.Errorf("full-text search: %w", err)
		}
		list := make([]candidate, len(hits))
		for i, h := range hits {
			k := itemKey{h.Scope, h.ID}
			items[k] = h
			list[i] = candidate{k, h.Score}
		}
		names, weights, lists = append(names, "fulltext"), append(weights, 1), append(lists, list)
		resp.Signals = append(resp.Signals, "fulltext")
	}
	// While the vector scan runs, look at the best full-text hits' turns:
	// they are most of the results, and present then asks again only about
	// the others (see outdated).
	known := map[itemKey]*staleness{}
	if err := s.outdated(ctx, userID, hits[:min(len(hits), batchSize(&req))], known); err != nil {
		wg.Wait()
		return nil, err
	}
	wg.Wait()
	for k, h := range vecItems {
		if _, ok := items[k]; !ok {
			items[k] = h
		}
	}
	// A question full-text missed (see missedOwnWords) is asked in other
	// words than its answer: the vectors weigh more.
	missed := wants(&req, "fulltext") && missedOwnWords(req.Query, hits, items)
	if wants(&req, "fulltext") && s.opt.Expand != nil && s.opt.ExpandWeight > 0 {
		near, err := nearWords(s.opt.Expand, req.Query, hits)
		if err != nil {
			return nil, err
		}
		if len(near) > 0 {
			lists[0] = withNearWords(hits, items, len(agentmem.SearchTerms(req.Query)), near, s.opt.ExpandWeight, n) // the full-text list is the first
		}
	}
	if wants(&req, "vector") && s.emb != nil {
		if err := vecErr; err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.opt.Log.WarnContext(ctx, "vector search unavailable; full-text only", agentmem.LogErr, err)
			resp.Warnings = append(resp.Warnings, "The embedder is unavailable: these results come from full-text search only.")
		} else {
			for _, l := range vecLists {
				w := l.weight
				if missed && s.opt.OwnWordsWeight > 0 {
					w = max(w, s.opt.OwnWordsWeight)
				}
				names, weights, lists = append(names, "vector"), append(weights, w), append(lists, l.list)
			}
			resp.Signals = append(resp.Signals, "vector")
		}
	}

	q := newQuery(asked)
	turns := scopes == nil || slices.Contains(scopes, agentmem.ScopeMessages)
	if s.opt.Intent != nil && !turns {
		cat, p, err := s.opt.Intent(ctx, req.Query)
		if err != nil {
			return nil, fmt.Errorf("the query's intent: %w", err)
		}
		if p >= cmp.Or(s.opt.IntentMin, DefaultIntentMin) {
			q.intent = cat
		}
	}
	results, keys := rank(&req, q, halfLife, items, names, weights, lists, s.weigh)
	if len(named) > 0 {
		// A question that names the user asks about them, not for their
		// name: "what's Sophie's job now?" is not answered by "User is
		// called Sophie.".
		results, keys = withoutNaming(results, keys, named)
	}
	if turns {
		// Where turns are searched, a memory kept in the user's words
		// (agentmem.SaidPrefix) is an echo of one: the turn answers.
		results, keys = withoutSaid(results, keys)
	}
	if vecErr != nil || !wants(&req, "vector") {
		vecLists = nil
	}
	rel := s.relevanceOf(req.Query, vecLists)
	if resp.Results, err = s.present(ctx, userID, &req, items, results, keys, known, rel); err != nil {
		return nil, err
	}
	if err := s.supersededBy(ctx, userID, resp.Results); err != nil {
		return nil, err
	}
	return resp, nil
}

// present demotes the results that no longer hold (see outdated), sets
// the relevance of those it checks (rel), and returns the best req.TopK
// of those whose relevance reaches req.MinScore. results, best first, are those of rank, keys their
// items. Demoting only lowers a score, so it checks them in batches from
// the best and stops once req.TopK checked results relevant enough score
// at least as much as the next unchecked one: the store is asked about
// the first few candidates, not all of them.
func (s *Searcher) present(ctx context.Context, userID string, req *Request, items map[itemKey]agentmem.TextHit, results []Result, keys []itemKey,
	known map[itemKey]*staleness, rel *relevance) ([]Result, error) {
	weight := cmp.Or(s.opt.SupersededWeight, DefaultSupersededWeight)
	batch := batchSize(req)
	checked := 0
	for checked < len(results) {
		end := min(len(results), checked+batch)
		hits := make([]agentmem.TextHit, 0, end-checked)
		for _, k := range keys[checked:end] {
			hits = append(hits, items[k])
		}
		if err := s.outdated(ctx, userID, hits, known); err != nil {
			return nil, err
		}
		rel.set(results[checked:end], keys[checked:end])
		for i := checked; i < end; i++ {
			if st := known[keys[i]]; st != nil {
				r, at := &results[i], st.at
				r.InvalidAt, r.SupersededBy, r.SupersededText = &at, st.by, st.text
				r.Scores["superseded"] = weight
				r.Score *= weight
			}
		}
		if checked = end; checked == len(results) {
			break
		}
		next := results[checked].Score // the most any unchecked result scores
		n := 0
		for _, r := range withoutEchoes(slices.Clone(results[:checked])) { // echoes do not count
			if r.Score >= next && r.Relevance >= req.MinScore {
				n++
			}
		}
		if n >= req.TopK {
			break
		}
	}
	out := slices.DeleteFunc(results[:checked], func(r Result) bool { return r.Relevance < req.MinScore })
	slices.SortStableFunc(out, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
	out = withoutEchoes(out)
	if out == nil {
		out = []Result{} // none found: results [] as the API documents, not null
	}
	return out[:min(len(out), req.TopK)], nil
}

// asUser returns the query with each whole-word occurrence of one of
// the user's names replaced by "they", and the names it replaced: in any
// case when the query is written in lower case, else only where it is
// written with its capital.
func asUser(query string, names []string) (string, []string) {
	var named []string
	// A query written with capitals names the user with one ("Joy"); one
	// in lower case may not ("what's joy's job?").
	cased := strings.IndexFunc(query, unicode.IsUpper) >= 0
	for _, name := range names {
		if len(name) < 2 {
			continue
		}
		if cased && !hasWord(query, name) {
			continue // "what brings her joy?" does not name Joy
		}
		var ok bool
		if query, ok = agentmem.ReplaceWord(query, name, "they"); ok {
			named = append(named, name)
		}
	}
	return query, named
}

// hasWord reports whether w is a whole word of s, in the same case.
func hasWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		k := j + len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[k:])
		if (j == 0 || !unicode.IsLetter(before) && !unicode.IsDigit(before)) && (k == len(s) || !unicode.IsLetter(after) && !unicode.IsDigit(after)) {
			return true
		}
		i = j + 1
	}
}

// withoutNaming returns results and their keys without the memories that
// say one of names.
func withoutNaming(results []Result, keys []itemKey, names []string) ([]Result, []itemKey) {
	var r2 []Result
	var k2 []itemKey
	for i, r := range results {
		if r.Kind == kinds[agentmem.ScopeMemories] && slices.ContainsFunc(names, func(n string) bool {
			_, ok := agentmem.ReplaceWord(r.Text, n, "")
			return ok
		}) {
			continue
		}
		r2, k2 = append(r2, r), append(k2, keys[i])
	}
	return r2, k2
}

// withoutSaid returns results and their keys without the memories kept
// in the user's words.
func withoutSaid(results []Result, keys []itemKey) ([]Result, []itemKey) {
	var r2 []Result
	var k2 []itemKey
	for i, r := range results {
		if r.Kind == kinds[agentmem.ScopeMemories] && strings.HasPrefix(r.Text, agentmem.SaidPrefix) {
			continue
		}
		r2, k2 = append(r2, r), append(k2, keys[i])
	}
	return r2, k2
}

// withoutEchoes returns results, best first, without the worse of a
// message and a memory that keeps it in the user's words
// (agentmem.SaidPrefix): the same turn once.
func withoutEchoes(results []Result) []Result {
	type turn struct {
		thread string
		seq    int64
	}
	seen := map[turn]bool{}
	return slices.DeleteFunc(results, func(r Result) bool {
		var t turn
		switch {
		case r.Kind == kinds[agentmem.ScopeMessages]:
			t = turn{r.ThreadID, r.SeqFrom}
		case r.Kind == kinds[agentmem.ScopeMemories] && strings.HasPrefix(r.Text, agentmem.SaidPrefix) && r.SeqFrom == r.SeqTo && r.SeqFrom > 0:
			t = turn{r.ThreadID, r.SeqFrom}
		default:
			return false
		}
		if seen[t] {
			return true
		}
		seen[t] = true
		return false
	})
}

// batchSize is how many results present checks at a time.
func batchSize(req *Request) int { return max(2*req.TopK, 10) }

// staleness is why a result no longer holds.
type staleness struct {
	at       time.Time // when (its newest memory) was invalidated
	by, text string    // the superseding memory and its text ("" when unknown or none)
}

// outdated finds which of hits no longer hold and records it in known
// (nil: it holds), leaving out those known already. Those that no longer
// hold are invalidated memories (only there with
// filters.include_invalid), and messages, chunks and summaries every one
// of whose memories (those with a source, agentmem.Memory.Sources, in
// the same thread that overlaps the item's seqs: the turn a memory was
// drawn from and every turn that said it again) is invalidated. Such an item is marked with the
// invalidation of its newest invalidated memory, and the memory that
// superseded it. An item from which a memory that holds was drawn too is
// outdated only if its text names what the invalidated one said and its
// successor does not ("I live in Porto and I work as a nurse" once the
// user moved to Lisbon; see names); an item from which no memory was
// drawn is not outdated.
//
// It costs one store query (FindMemorySources) over the items' turns,
// which probes an index of the invalidated memories only (a batch may
// hold a memory twice, when it overlaps two of them; it changes nothing),
// and none when the items are all valid memories.
func (s *Searcher) outdated(ctx context.Context, userID string, hits []agentmem.TextHit, known map[itemKey]*staleness) error {
	items := slices.DeleteFunc(slices.Clone(hits), func(h agentmem.TextHit) bool {
		_, ok := known[itemKey{h.Scope, h.ID}]
		return ok
	})
	seen := map[agentmem.ThreadRange]bool{}
	var ranges []agentmem.ThreadRange
	for _, h := range items {
		r := agentmem.ThreadRange{ThreadID: h.ThreadID, SeqFrom: h.SeqFrom, SeqTo: h.SeqTo}
		if h.ThreadID != "" && h.SeqTo >= max(h.SeqFrom, 1) && (h.Scope != agentmem.ScopeMemories || h.InvalidAt != nil) && !seen[r] {
			seen[r] = true
			ranges = append(ranges, r)
		}
	}
	bySrc := map[string][]agentmem.MemorySource{}
	for len(ranges) > 0 {
		batch := ranges[:min(len(ranges), agentmem.MaxPageSize)]
		ranges = ranges[len(batch):]
		srcs, err := s.store.FindMemorySources(ctx, userID, batch)
		if err != nil {
			return fmt.Errorf("find memory sources: %w", err)
		}
		for _, src := range srcs {
			bySrc[src.ThreadID] = append(bySrc[src.ThreadID], src)
		}
	}
	for _, h := range items {
		k := itemKey{h.Scope, h.ID}
		known[k] = nil // holds, unless found otherwise below
		if h.Scope == agentmem.ScopeMemories {
			if h.InvalidAt == nil {
				continue
			}
			st := staleness{at: *h.InvalidAt}
			for _, src := range bySrc[h.ThreadID] {
				if src.ID == h.ID {
					st.by, st.text = src.SupersededBy, src.SupersededText
				}
			}
			known[k] = &st
			continue
		}
		var newest, said *agentmem.MemorySource // the newest invalidated memory; of those the item's text names
		holds := false
		for i, src := range bySrc[h.ThreadID] {
			if src.SeqTo < h.SeqFrom || src.SeqFrom > h.SeqTo || src.SeqTo == 0 {
				continue // not drawn from this item's turns
			}
			if src.InvalidAt == nil {
				holds = true
				continue
			}
			if newest == nil || src.InvalidAt.After(*newest.InvalidAt) || src.InvalidAt.Equal(*newest.InvalidAt) && src.ID > newest.ID {
				newest = &bySrc[h.ThreadID][i]
			}
			if names(h.Text, src) && (said == nil || src.InvalidAt.After(*said.InvalidAt)) {
				said = &bySrc[h.ThreadID][i]
			}
		}
		if holds {
			newest = said
		}
		if newest != nil {
			known[k] = &staleness{at: *newest.InvalidAt, by: newest.SupersededBy, text: newest.SupersededText}
		}
	}
	return nil
}

// supersededBy completes the marks of invalidated memories that outdated
// did not find superseded (it finds memories by their sources: not one
// without provenance, nor one whose thread was deleted for good): it
// looks up each, and what superseded it. Only results need it: at most
// top_k, and only with filters.include_invalid.
func (s *Searcher) supersededBy(ctx context.Context, userID string, results []Result) error {
	for i := range results {
		r := &results[i]
		if r.Kind != kinds[agentmem.ScopeMemories] || r.InvalidAt == nil || r.SupersededBy != "" {
			continue
		}
		m, err := s.store.FindMemoryByID(ctx, userID, r.ID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue // deleted since
		} else if err != nil {
			return err
		}
		if r.SupersededBy = m.SupersededBy; m.SupersededBy == "" {
			continue
		}
		by, err := s.store.FindMemoryByID(ctx, userID, m.SupersededBy)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		r.SupersededText = by.Text
	}
	return nil
}

// rank fuses the signals' lists into results, best first, with their
// items' keys: each scored by its reciprocal-rank fusion (scaled to 0–1),
// weighed by weigh (a message's speaker and form), decayed by age with a
// half-life and weighed by importance when asked. present then demotes
// those that no longer hold, and cuts.
func rank(req *Request, q *query, halfLife time.Duration, items map[itemKey]agentmem.TextHit, names []string, weights []float64, lists [][]candidate,
	weigh func(q *query, h *agentmem.TextHit, r *Result)) ([]Result, []itemKey) {
	type scored struct {
		r Result
		k itemKey
	}
	var all []scored
	scale := maxRRF(names, weights)
	now := time.Now()
	for _, f := range fuse(names, weights, lists) {
		h, ok := items[f.key]
		if !ok {
			continue
		}
		r := Result{Kind: kinds[h.Scope], ID: h.ID, Text: h.Text, ThreadID: h.ThreadID, SeqFrom: h.SeqFrom, SeqTo: h.SeqTo, CreatedAt: h.CreatedAt,
			Scores: map[string]float64{"rrf": f.rrf}}
		for sig, v := range f.scores {
			r.Scores[sig] = v
		}
		r.Score = f.rrf / scale
		if halfLife > 0 {
			age := max(now.Sub(h.CreatedAt), 0)
			decay := math.Pow(0.5, float64(age)/float64(halfLife))
			r.Scores["recency"] = decay
			r.Score *= decay
		}
		if weigh != nil {
			weigh(q, &h, &r)
		}
		if w := req.ImportanceWeight; w > 0 {
			importance := 0.5
			if h.Scope == agentmem.ScopeMemories {
				importance = h.Importance
			}
			factor := 1 - w + w*importance
			r.Scores["importance"] = factor
			r.Score *= factor
		}
		all = append(all, scored{r, f.key})
	}
	if asksPresent(q) {
		// "what's her latest A1C?", "does she have a dog at the moment?":
		// of the turns that answer, the newest tell the present. A turn
		// scores less the older it is than the newest candidate turn
		// (memories and summaries keep theirs: a memory superseded is
		// demoted by present, and its time is when it was stored).
		var newest time.Time
		for _, a := range all {
			if a.k.scope == agentmem.ScopeMessages && a.r.CreatedAt.After(newest) {
				newest = a.r.CreatedAt
			}
		}
		for i := range all {
			if r := &all[i].r; all[i].k.scope == agentmem.ScopeMessages {
				decay := math.Pow(0.5, float64(newest.Sub(r.CreatedAt))/float64(presentHalfLife))
				factor := 1 - presentWeight*(1-decay)
				r.Scores["present"] = factor
				r.Score *= factor
			}
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.r.Score, a.r.Score) })
	results, keys := make([]Result, len(all)), make([]itemKey, len(all))
	for i, a := range all {
		results[i], keys[i] = a.r, a.k
	}
	return results, keys
}

// query is what weigh needs to know of a search's query: its words,
// lower-cased, and the category of memories it asks about ("" if none
// or unknown: see Options.Intent).
type query struct {
	words  map[string]bool
	intent string
}

// presentWeight and presentHalfLife weigh a turn by its age for a query
// about the present (asksPresent): one presentHalfLife older than the
// newest candidate turn scores 1 − presentWeight/2 of its score.
var (
	presentWeight   = 0.3
	presentHalfLife = 30 * 24 * time.Hour
)

// asksPresent reports whether a query asks about the present: "now",
// "currently", "these days", "latest", "at the moment", "still".
func asksPresent(q *query) bool {
	for _, w := range []string{"now", "currently", "current", "latest", "nowadays", "lately", "still", "anymore"} {
		if q.words[w] {
			return true
		}
	}
	return q.words["these"] && q.words["days"] || q.words["at"] && q.words["moment"] || q.words["most"] && q.words["recent"]
}

func newQuery(q string) *query {
	words := map[string]bool{}
	for _, w := range wordsOf(q) {
		words[w] = true
	}
	return &query{words: words}
}

// wordsOf splits s into its words (runs of letters and digits),
// lower-cased: "Maria's" is "maria" and "s".
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// weigh applies the weights of a message's form to its result: its
// speaker's (SpeakerWeight) and a question's (QuestionWeight), and a
// memory's of the query's intent (IntentWeight), each recorded in
// Scores.
func (s *Searcher) weigh(q *query, h *agentmem.TextHit, r *Result) {
	if h.Scope == agentmem.ScopeMemories && q.intent != "" && h.Category == q.intent {
		w := cmp.Or(s.opt.IntentWeight, DefaultIntentWeight)
		r.Scores["intent"] = w
		r.Score *= w
	}
	if h.Scope != agentmem.ScopeMessages {
		return
	}
	if w := cmp.Or(s.opt.SpeakerWeight, DefaultSpeakerWeight); w != 1 && q.namesAuthorOf(h) {
		r.Scores["speaker"] = w
		r.Score *= w
	}
	if w := cmp.Or(s.opt.QuestionWeight, DefaultQuestionWeight); w != 1 && strings.HasSuffix(strings.TrimSpace(h.Text), "?") {
		r.Scores["question"] = w
		r.Score *= w
	}
}

// namesAuthorOf reports whether the query names the message's author: all the
// words of its Name are words of the query ("Maria", "Maria Lopez"), or
// it has none, is the user's and the query says "user".
func (q *query) namesAuthorOf(h *agentmem.TextHit) bool {
	if h.Name == "" {
		return h.Role == agentmem.RoleUser && q.words["user"]
	}
	words := wordsOf(h.Name)
	for _, w := range words {
		if !q.words[w] {
			return false
		}
	}
	return len(words) > 0
}

// vectorCandidates embeds the query and scans the user's vectors; the
// items found are looked up (and filtered) through the store and added to
// items, which the caller owns (it runs beside the full-text query).
func (s *Searcher) vectorCandidates(ctx context.Context, userID, query string, scopes []string, n int, filter agentmem.SearchFilter,
	items map[itemKey]agentmem.TextHit) ([]weightedList, error) {
	embs := s.embeddings(scopes)
	out := make([]weightedList, len(embs))
	found := make([]map[itemKey]agentmem.TextHit, len(embs))
	errs := make([]error, len(embs))
	var wg sync.WaitGroup
	for i, e := range embs {
		wg.Go(func() {
			out[i].weight, out[i].space, out[i].scopes = e.weight, e.Space, e.scopes
			found[i] = map[itemKey]agentmem.TextHit{}
			out[i].list, out[i].query, out[i].vectors, errs[i] = s.nearestItems(ctx, userID, query, e, n, filter, found[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, f := range found {
		maps.Copy(items, f)
	}
	return out, nil
}

// weightedList is a ranked list of candidates and its weight in the
// fusion: the items of scopes nearest to query in space, among the
// user's vectors.
type weightedList struct {
	list    []candidate
	weight  float64
	space   string
	scopes  map[string]bool
	query   []float32
	vectors *userVectors
}

// nearestItems returns the n items of e's scopes nearest to the query
// that pass filter, best first, and puts them in items; and the query's
// vector and the user's vectors in e's space.
func (s *Searcher) nearestItems(ctx context.Context, userID, query string, e scopedEmbedding, n int, filter agentmem.SearchFilter,
	items map[itemKey]agentmem.TextHit) ([]candidate, []float32, *userVectors, error) {
	near, qv, uv, err := s.nearest(ctx, userID, query, e, n)
	if err != nil {
		return nil, nil, nil, err
	}
	// A chunk has two vectors (its text's and its summary's): it ranks by
	// the nearer.
	for i := range near {
		if near[i].key.scope == agentmem.ScopeChunks {
			near[i].key.id = strings.TrimSuffix(near[i].key.id, agentmem.SummaryVectorSuffix)
		}
	}
	seen := map[itemKey]bool{}
	near = slices.DeleteFunc(near, func(c candidate) bool { // near is best first: the nearer vector stays
		dup := seen[c.key]
		seen[c.key] = true
		return dup
	})
	missing := map[string][]string{}
	for _, c := range near {
		missing[c.key.scope] = append(missing[c.key.scope], c.key.id)
	}
	found := map[itemKey]bool{}
	for scope, ids := range missing {
		hits, err := s.store.FindItems(ctx, userID, scope, ids, filter)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, h := range hits {
			k := itemKey{h.Scope, h.ID}
			items[k] = h
			found[k] = true
		}
	}
	var list []candidate
	for _, c := range near {
		if found[c.key] && len(list) < n {
			list = append(list, c)
		}
	}
	return list, qv, uv, nil
}

// scopedEmbedding is an embedding and the scopes of a search whose items
// it embeds.
type scopedEmbedding struct {
	agentmem.Embedding
	scopes map[string]bool
	weight float64 // of its list in the fusion
}

// embeddings returns the embeddings of the given scopes (all when nil):
// one, or two when Options.Bulk embeds messages and chunks apart.
func (s *Searcher) embeddings(scopes []string) []scopedEmbedding {
	if scopes == nil {
		scopes = []string{agentmem.ScopeMemories, agentmem.ScopeMessages, agentmem.ScopeChunks, agentmem.ScopeSummaries}
	}
	w := cmp.Or(s.opt.VectorWeight, 1)
	main := scopedEmbedding{agentmem.Embedding{Embedder: s.emb, Space: s.space}, map[string]bool{}, w}
	bulk := scopedEmbedding{scopes: map[string]bool{}, weight: cmp.Or(s.opt.BulkVectorWeight, w)}
	if s.opt.Bulk != nil {
		bulk.Embedding = *s.opt.Bulk
	}
	for _, sc := range scopes {
		if s.opt.Bulk != nil && (sc == agentmem.ScopeMessages || sc == agentmem.ScopeChunks) {
			bulk.scopes[sc] = true
		} else {
			main.scopes[sc] = true
		}
	}
	var out []scopedEmbedding
	for _, e := range []scopedEmbedding{main, bulk} {
		if len(e.scopes) > 0 && e.Embedder != nil {
			out = append(out, e)
		}
	}
	return out
}

// nearest embeds the query in e's space and returns the user's 2n
// vectors of e's scopes nearest to it, best first (over-fetched: some
// candidates may be filtered out later), the query's vector and the
// user's vectors.
func (s *Searcher) nearest(ctx context.Context, userID, query string, e scopedEmbedding, n int) ([]candidate, []float32, *userVectors, error) {
	qv, err := e.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, nil, nil, err
	}
	if len(qv) != 1 {
		return nil, nil, nil, fmt.Errorf("embedder returned %d vectors for 1 text", len(qv))
	}
	uv, err := s.cache.get(ctx, s.store, userID, e.Space)
	if err != nil {
		return nil, nil, nil, err
	}
	return uv.nearest(qv[0], 2*n, e.scopes), qv[0], uv, nil
}

// names reports whether text names what the invalidated memory src said
// and its successor does not: a word of four letters or more of src's
// text, absent from the superseding text, is in text ("porto" of "User
// lives in Porto." superseded by "User moved to Lisbon."). Such an item
// says the outdated fact even if other facts drawn from it still hold.
func names(text string, src agentmem.MemorySource) bool {
	succ := map[string]bool{}
	for _, w := range wordsOf(src.SupersededText) {
		succ[w] = true
	}
	in := map[string]bool{}
	for _, w := range wordsOf(text) {
		in[w] = true
	}
	for _, w := range wordsOf(src.Text) {
		if len(w) >= 4 && w != "user" && !succ[w] && in[w] {
			return true
		}
	}
	return false
}
