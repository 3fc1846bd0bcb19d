package locomo

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/agentmem/agentmem"
)

// The BM25 parameters: the usual k1 and b of Robertson and Zaragoza.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25Searcher is the baseline Searcher: Okapi BM25 over a user's
// messages, each message's content split into lower-cased words (runs of
// letters and digits), with no stemming and no stopwords. It is the
// "lowercase words" baseline of the data set's notes, over the store
// rather than over the file, and searches the messages scope only.
//
// It reads a user's messages once, on Index or on the first search, and
// keeps their index in memory; messages appended later are not seen until
// Index is called again. It is safe for concurrent use.
type BM25Searcher struct {
	store Store

	mu    sync.Mutex
	users map[string]*bm25Index
}

var (
	_ Searcher = (*BM25Searcher)(nil)
	_ Indexer  = (*BM25Searcher)(nil)
)

// NewBM25Searcher returns a BM25 searcher over the messages of store.
func NewBM25Searcher(store Store) *BM25Searcher {
	return &BM25Searcher{store: store, users: map[string]*bm25Index{}}
}

// Index (re)reads the user's messages and indexes them.
func (s *BM25Searcher) Index(ctx context.Context, userID string) error {
	ix, err := s.build(ctx, userID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.users[userID] = ix
	s.mu.Unlock()
	return nil
}

// Search implements Searcher: the user's messages that share a word with
// query, by BM25 score, best first (ties in time order), at most topK.
func (s *BM25Searcher) Search(ctx context.Context, userID, query string, topK int) ([]Hit, error) {
	s.mu.Lock()
	ix := s.users[userID]
	s.mu.Unlock()
	if ix == nil {
		if err := s.Index(ctx, userID); err != nil {
			return nil, err
		}
		s.mu.Lock()
		ix = s.users[userID]
		s.mu.Unlock()
	}
	return ix.search(query, topK), nil
}

// build reads every message of the user's threads, in time order.
func (s *BM25Searcher) build(ctx context.Context, userID string) (*bm25Index, error) {
	var msgs []*agentmem.Message
	for cursor := ""; ; {
		threads, next, err := s.store.FindThreads(ctx, userID, agentmem.ThreadFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("bm25: find threads of %s: %w", userID, err)
		}
		for _, t := range threads {
			for mc := ""; ; {
				page, next, err := s.store.FindMessages(ctx, userID, t.ID, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: mc})
				if err != nil {
					return nil, fmt.Errorf("bm25: find messages of %s/%s: %w", userID, t.ID, err)
				}
				msgs = append(msgs, page...)
				if mc = next; mc == "" {
					break
				}
			}
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	slices.SortFunc(msgs, func(a, b *agentmem.Message) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ThreadID, b.ThreadID), cmp.Compare(a.Seq, b.Seq))
	})
	ix := &bm25Index{postings: map[string][]posting{}}
	total := 0
	for i, m := range msgs {
		words := bm25Words(m.Content)
		tf := map[string]int32{}
		for _, w := range words {
			tf[w]++
		}
		for w, n := range tf {
			ix.postings[w] = append(ix.postings[w], posting{doc: int32(i), tf: n})
		}
		ix.docs = append(ix.docs, bm25Doc{msg: m, length: len(words)})
		total += len(words)
	}
	if len(msgs) > 0 {
		ix.avgLength = float64(total) / float64(len(msgs))
	}
	return ix, nil
}

// bm25Index is an inverted index of one user's messages.
type bm25Index struct {
	docs      []bm25Doc
	postings  map[string][]posting // word → the docs that have it, ascending
	avgLength float64              // words per doc
}

type bm25Doc struct {
	msg    *agentmem.Message
	length int // words
}

type posting struct {
	doc int32 // index in docs
	tf  int32 // times the word occurs in the doc
}

// search scores every doc that shares a word with query:
//
//	score(d) = Σ_{w ∈ query} idf(w) · tf(w,d)·(k1+1) / (tf(w,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(w)   = ln(1 + (N − df(w) + 0.5) / (df(w) + 0.5))
//
// A word repeated in the query counts once per occurrence. idf is
// Lucene's form, which never goes negative for words in most docs.
func (ix *bm25Index) search(query string, topK int) []Hit {
	if topK <= 0 || len(ix.docs) == 0 {
		return nil
	}
	n := float64(len(ix.docs))
	scores := make([]float64, len(ix.docs))
	var matched []int32
	for _, w := range bm25Words(query) {
		ps := ix.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			if scores[p.doc] == 0 {
				matched = append(matched, p.doc)
			}
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(ix.docs[p.doc].length)/ix.avgLength)
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	slices.SortFunc(matched, func(a, b int32) int {
		return cmp.Or(cmp.Compare(scores[b], scores[a]), cmp.Compare(a, b))
	})
	hits := make([]Hit, 0, min(topK, len(matched)))
	for _, d := range matched[:min(topK, len(matched))] {
		m := ix.docs[d].msg
		hits = append(hits, Hit{
			Scope:    agentmem.ScopeMessages,
			ThreadID: m.ThreadID,
			SeqFrom:  m.Seq,
			SeqTo:    m.Seq,
			Text:     m.Content,
			Score:    scores[d],
		})
	}
	return hits
}

// bm25Words splits text into lower-cased words: maximal runs of letters
// and digits.
func bm25Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
