package window

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"

	"github.com/agentmem/agentmem"
)

// maybeSummarize asks for a newer summary when the unsummarised history
// passed the request's trigger: it enqueues a summarize job and never
// waits for it. The summary is to cover everything but the newest part the
// policy keeps verbatim.
func (bl *build) maybeSummarize(ctx context.Context, t *Telemetry) {
	jobs := bl.b.jobs
	if jobs == nil {
		return
	}
	var floor int64
	if bl.sum != nil {
		floor = bl.sum.ThroughSeq
	}
	if bl.th.LastSeq <= floor {
		return
	}
	s := bl.req.Summarize
	budget := float64(bl.req.BudgetTokens)
	// The history read above the summary: its tokens and turns.
	tailTokens, tailTurns := 0, 0
	for i, m := range bl.history {
		if m.Seq > floor {
			tailTokens += bl.historyCost[i]
			if m.Role == agentmem.RoleUser {
				tailTurns++
			}
		}
	}
	trigger := !bl.reachedEnd || // the tail did not even fit: past any threshold
		s.TriggerTurns > 0 && tailTurns > s.TriggerTurns ||
		s.TriggerFraction > 0 && float64(tailTokens) > s.TriggerFraction*budget
	if !trigger {
		return
	}
	// Keep the newest turns, or the newest fraction of the budget, as
	// they are; the summary covers what comes before.
	keepFrom := len(bl.history) // index of the oldest message kept verbatim
	switch {
	case s.KeepTurns > 0:
		turns := 0
		for i := len(bl.history) - 1; i >= 0 && turns < s.KeepTurns; i-- {
			keepFrom = i
			if bl.history[i].Role == agentmem.RoleUser {
				turns++
			}
		}
	case s.KeepFraction > 0:
		used := 0
		for i := len(bl.history) - 1; i >= 0; i-- {
			if float64(used+bl.historyCost[i]) > s.KeepFraction*budget {
				break
			}
			used += bl.historyCost[i]
			keepFrom = i
		}
		// Start the kept part at a turn, so the summary ends with one.
		for i := keepFrom; i < len(bl.history); i++ {
			if bl.history[i].Role == agentmem.RoleUser {
				keepFrom = i
				break
			}
		}
	}
	through := bl.th.LastSeq
	if bl.inputMsg != nil && bl.inputMsg.Seq > 0 {
		through = bl.inputMsg.Seq - 1 // the newest user message is the input: keep it
	}
	if keepFrom < len(bl.history) {
		through = bl.history[keepFrom].Seq - 1
	}
	if through <= floor {
		return
	}
	payload, _ := json.Marshal(summarizePayload{ThreadID: bl.th.ID, ThroughSeq: through})
	// Only while the thread is there: it may have been erased with its
	// user since this build read it.
	rctx := agentmem.WithRequired(ctx, agentmem.Required{UserID: bl.th.UserID, ThreadID: bl.th.ID})
	j, err := jobs.EnqueueJob(rctx, &agentmem.Job{UserID: bl.th.UserID, Kind: SummarizeJobKind, Key: bl.th.ID, Payload: payload})
	if err != nil {
		bl.b.opt.Log.WarnContext(ctx, "summarize job not enqueued", agentmem.LogErr, err)
		t.Warnings = append(t.Warnings, "A newer summary is needed but could not be requested; the history is trimmed meanwhile.")
		return
	}
	t.SummaryJob = j.ID
}

//go:embed prompts/*.tmpl
var promptFS embed.FS

var summaryPrompt = template.Must(template.ParseFS(promptFS, "prompts/summary.tmpl"))

// Summarizer runs summarize jobs: it brings a thread's cumulative summary
// up to the job's seq, in steps of at most ChunkTokens of new messages,
// each step stored as a new summary version. With a model it asks for the
// old summary updated with the new turns (seed 001's prompt); without one,
// or on a job's last attempt after the model failed, it writes an
// extractive summary. Steps are idempotent: a step that ran twice stores
// one version (SummaryStore.PutSummary only moves forward).
type Summarizer struct {
	Store interface {
		agentmem.MessageStore
		agentmem.SummaryStore
	}
	Chat        agentmem.Chat // nil: extractive summaries only
	Model       string        // the chat model ("" for the client's default)
	MaxWords    int           // the summary's length (default 150)
	ChunkTokens int           // new history per step (default 6000 tokens)
	Log         *slog.Logger
	// Stored, when set, is called with each summary stored, so that it
	// can be made searchable (index.Indexer.EmbedSummary). Its error
	// fails the step, which is retried.
	Stored func(ctx context.Context, s *agentmem.Summary) error
}

// Run is the summarize job's handler (a worker.Handler).
func (s *Summarizer) Run(ctx context.Context, j *agentmem.Job) error {
	var p summarizePayload
	if err := json.Unmarshal(j.Payload, &p); err != nil || p.ThreadID == "" || p.ThroughSeq < 1 {
		return agentmem.Errorf(agentmem.EINVALID, "summarize job %s has a malformed payload.", j.ID)
	}
	lastAttempt := j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts
	err := s.SummarizeThrough(ctx, j.UserID, p.ThreadID, p.ThroughSeq, lastAttempt)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil // the thread was deleted meanwhile: nothing to summarise
	}
	return err
}

// SummarizeThrough brings a thread's cumulative summary up to seq
// throughSeq (or the thread's end, if shorter), step by step, as a
// summarize job does; on the last attempt (lastAttempt) a failing model
// gives way to an extractive summary. The reflection at a thread's end
// calls it for the thread's last seq.
func (s *Summarizer) SummarizeThrough(ctx context.Context, userID, threadID string, throughSeq int64, lastAttempt bool) error {
	p := summarizePayload{ThreadID: threadID, ThroughSeq: throughSeq}
	for {
		done, err := s.step(ctx, userID, p, lastAttempt)
		if err != nil || done {
			return err
		}
	}
}

// step summarises the next chunk and reports whether the summary reaches
// p.ThroughSeq.
func (s *Summarizer) step(ctx context.Context, userID string, p summarizePayload, lastAttempt bool) (bool, error) {
	old, err := s.Store.FindSummary(ctx, userID, p.ThreadID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		old, err = &agentmem.Summary{}, nil
	}
	if err != nil {
		return false, err
	}
	if old.ThroughSeq >= p.ThroughSeq {
		return true, nil
	}
	chunk := cmp.Or(s.ChunkTokens, 6000)
	var msgs []*agentmem.Message
	tokens := 0
	after := old.ThroughSeq
	for tokens < chunk && after < p.ThroughSeq {
		page, _, err := s.Store.FindMessages(ctx, userID, p.ThreadID, agentmem.MessageFilter{AfterSeq: after, BeforeSeq: p.ThroughSeq + 1, Limit: 200})
		if err != nil {
			return false, err
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			if tokens > 0 && tokens+m.TokenCount > chunk {
				break
			}
			msgs = append(msgs, m)
			tokens += m.TokenCount
			after = m.Seq
		}
		if after != page[len(page)-1].Seq {
			break
		}
	}
	if len(msgs) == 0 {
		return true, nil // the thread is shorter than the job thought
	}
	words := cmp.Or(s.MaxWords, 150)
	next := &agentmem.Summary{UserID: userID, ThreadID: p.ThreadID, ThroughSeq: after}
	if s.Chat != nil {
		text, model, err := s.llm(ctx, old.Text, msgs, words)
		switch {
		case err == nil:
			next.Text, next.Method, next.Model = text, agentmem.SummaryLLM, model
		case !lastAttempt:
			return false, fmt.Errorf("summarize with the model: %w", err) // retried later; the context trims meanwhile
		default:
			s.log().WarnContext(ctx, "model failed on the last attempt; writing an extractive summary", agentmem.LogThread, p.ThreadID, agentmem.LogErr, err)
		}
	}
	if next.Text == "" {
		next.Text, next.Method = Extractive(old.Text, msgs, words), agentmem.SummaryExtractive
	}
	stored, err := s.Store.PutSummary(ctx, next)
	if err != nil {
		return false, err
	}
	if s.Stored != nil {
		if err := s.Stored(ctx, stored); err != nil {
			return false, err
		}
	}
	return after >= p.ThroughSeq, nil
}

func (s *Summarizer) log() *slog.Logger { return agentmem.LoggerOr(s.Log) }

// ChunkWords bounds the summary of a chunk of turns.
const ChunkWords = 60

// SummarizeChunk summarises a chunk's turns in at most ChunkWords words
// (index.Indexer.Summarize): by the model when one is configured, and
// extractively without one or when the model is unavailable.
func (s *Summarizer) SummarizeChunk(ctx context.Context, turns []*agentmem.Message) (string, error) {
	if s.Chat != nil {
		text, _, err := s.llm(ctx, "", turns, ChunkWords)
		if err == nil {
			return text, nil
		}
		if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE || ctx.Err() != nil {
			return "", err
		}
		s.log().WarnContext(ctx, "model unavailable: extractive chunk summary", agentmem.LogErr, err)
	}
	defer agentmem.BackgroundCPU(ctx)()
	return Extractive("", turns, ChunkWords), nil
}

// llm asks the model for the updated summary. A blank answer is an error.
func (s *Summarizer) llm(ctx context.Context, old string, msgs []*agentmem.Message, words int) (string, string, error) {
	prompt, err := SummaryPrompt(old, msgs, words)
	if err != nil {
		return "", "", err
	}
	resp, err := s.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     s.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: prompt}},
		MaxTokens: words * 3,
	})
	if err != nil {
		return "", "", err
	}
	text := strings.TrimSpace(resp.Content)
	if text == "" {
		return "", "", agentmem.Errorf(agentmem.EUNAVAILABLE, "The model answered with an empty summary.")
	}
	return limitWords(text, 2*words), resp.Model, nil
}

// SummaryPrompt renders the prompt that asks a model for the old summary
// updated with msgs, in at most words words.
func SummaryPrompt(old string, msgs []*agentmem.Message, words int) (string, error) {
	type turn struct{ Role, Content string }
	data := struct {
		OldSummary string
		Turns      []turn
		MaxWords   int
	}{OldSummary: old, MaxWords: words}
	for _, m := range msgs {
		if m.Role == agentmem.RoleUser || m.Role == agentmem.RoleAssistant {
			if content := strings.TrimSpace(m.Content); content != "" {
				data.Turns = append(data.Turns, turn{m.Role, content})
			}
		}
	}
	var b strings.Builder
	if err := summaryPrompt.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render summary prompt: %w", err)
	}
	return b.String(), nil
}

// limitWords cuts s after n words.
func limitWords(s string, n int) string {
	fields := strings.Fields(s)
	if len(fields) <= n {
		return s
	}
	return strings.Join(fields[:n], " ") + " …"
}

var sentenceEnd = regexp.MustCompile(`([.!?])\s+|\n+`)

// sentence is a candidate of the extractive summary.
type sentence struct {
	text  string
	pos   int // order of appearance
	words []string
	bonus float64
}

// Extractive returns the salient sentences of the old summary and msgs,
// at most maxWords words, in their original order: the summary that needs
// no model. A sentence of three words or more scores by its content words,
// each worth more the more often the conversation repeats it (1 + log of
// its frequency), over the square root of their number; the user's
// sentences and those with numbers score higher, and the old summary's
// keep a head start so that the summary stays cumulative.
func Extractive(old string, msgs []*agentmem.Message, maxWords int) string {
	var cands []sentence
	add := func(prefix, text string, bonus float64) {
		for _, s := range splitSentences(text) {
			ws := contentWords(s)
			if len(ws) == 0 || len(strings.Fields(s)) < 3 { // fragments ("Great.", "Apartments.") say little alone
				continue
			}
			b := bonus
			if strings.ContainsFunc(s, unicode.IsDigit) {
				b += 1 // amounts, dates and counts are what summaries lose first
			}
			cands = append(cands, sentence{text: prefix + s, pos: len(cands), words: ws, bonus: b})
		}
	}
	add("", old, 0.5)
	for _, m := range msgs {
		switch m.Role {
		case agentmem.RoleUser:
			add("User: ", m.Content, 0.3)
		case agentmem.RoleAssistant:
			add("Assistant: ", m.Content, 0)
		}
	}
	freq := map[string]int{}
	for _, c := range cands {
		for _, w := range c.words {
			freq[w]++
		}
	}
	score := func(c sentence) float64 {
		sum := 0.0
		for _, w := range c.words {
			sum += 1 + math.Log(float64(freq[w]))
		}
		return sum/math.Sqrt(float64(len(c.words))) + c.bonus
	}
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b sentence) int { return cmp.Compare(score(b), score(a)) })
	seen := map[string]bool{}
	var picked []sentence
	words := 0
	for _, c := range order {
		key := strings.Join(c.words, " ")
		n := len(strings.Fields(c.text))
		if seen[key] || words+n > maxWords {
			continue
		}
		seen[key] = true
		picked = append(picked, c)
		words += n
	}
	slices.SortFunc(picked, func(a, b sentence) int { return cmp.Compare(a.pos, b.pos) })
	parts := make([]string, len(picked))
	for i, c := range picked {
		parts[i] = c.text
	}
	if len(parts) == 0 {
		// Nothing but fragments ("hi", "Great."): they are the summary.
		return limitWords(strings.TrimSpace(fragments(old, msgs)), maxWords)
	}
	return strings.Join(parts, " ")
}

// fragments is the old summary and the turns of msgs, as they are: the
// summary of a conversation too short for salient sentences.
func fragments(old string, msgs []*agentmem.Message) string {
	var b strings.Builder
	b.WriteString(old)
	for _, m := range msgs {
		if c := strings.TrimSpace(m.Content); c != "" && (m.Role == agentmem.RoleUser || m.Role == agentmem.RoleAssistant) {
			who := "User: "
			if m.Role == agentmem.RoleAssistant {
				who = "Assistant: "
			}
			b.WriteString(" " + who + c)
		}
	}
	return b.String()
}

// splitSentences splits text at sentence ends and line breaks, keeping
// the punctuation.
func splitSentences(text string) []string {
	var out []string
	last := 0
	for _, loc := range sentenceEnd.FindAllStringSubmatchIndex(text, -1) {
		end := loc[1]
		if loc[2] >= 0 {
			end = loc[3] // keep the punctuation, drop the space
		} else {
			end = loc[0]
		}
		if s := strings.TrimSpace(text[last:end]); s != "" {
			out = append(out, s)
		}
		last = loc[1]
	}
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, s)
	}
	return out
}

// contentWords returns the lower-cased words of s that carry meaning:
// three letters or more and not a stop word; a trailing "User:" or
// "Assistant:" prefix is not one.
func contentWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours all any can had has have her hers him his how its
	 let our out own she than that the their them then there these they this those too very was were what when where
	 which while who whom why will with would could should about above after again against also been before being below
	 between both did does doing down during each few from further here into just more most must now off once only other
	 over same some such through under until upon what yes yet user assistant okay sure thanks thank please`) {
		m[w] = true
	}
	return m
}()
