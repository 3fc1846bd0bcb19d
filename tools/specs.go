package tools

import (
	"context"
	"time"

	"github.com/agentmem/agentmem"
)

// The tools' input and output types. Their JSON schemas, and so what an
// LLM is told of each field, come from the json and jsonschema tags.
type (
	rememberIn struct {
		Text       string   `json:"text" jsonschema:"one self-contained statement about the user, in the third person, e.g. 'User is vegetarian.'"`
		Category   string   `json:"category,omitempty" jsonschema:"a category such as identity, preference, plan, family, work, health"`
		Importance *float64 `json:"importance,omitempty" jsonschema:"how much it matters, from 0 to 1 (default 0.5)"`
	}
	memoryOut struct {
		ID         string  `json:"id"`
		Text       string  `json:"text"`
		Kind       string  `json:"kind" jsonschema:"fact, or insight (drawn by reflection)"`
		Category   string  `json:"category,omitempty"`
		Importance float64 `json:"importance"`
	}

	searchIn struct {
		Query  string   `json:"query" jsonschema:"what to look for, in the user's words or yours"`
		Scopes []string `json:"scopes,omitempty" jsonschema:"where to look: memories, messages, chunks, summaries (memories and messages by default)"`
		Kinds  []string `json:"kinds,omitempty" jsonschema:"instead of scopes, where to look by kind: memories (facts the user told), insights (drawn by reflection), messages, chunks, summaries"`
		TopK   int      `json:"top_k,omitempty" jsonschema:"how many results at most, from 1 to 100 (default 5)"`
	}
	resultOut struct {
		Kind     string  `json:"kind" jsonschema:"memory, message, chunk or summary"`
		ID       string  `json:"id"`
		Text     string  `json:"text"`
		Score    float64 `json:"score"`
		ThreadID string  `json:"thread_id,omitempty"`
	}
	searchOut struct {
		Results  []resultOut `json:"results"`
		Warnings []string    `json:"warnings,omitempty"`
	}

	factsIn struct {
		Query string   `json:"query" jsonschema:"a question about the user, e.g. 'What does the user eat?'"`
		Kinds []string `json:"kinds,omitempty" jsonschema:"where to look, by kind: memories (facts the user told), insights (drawn by reflection), messages, chunks, summaries (default: memories and messages, or where the server's model chooses)"`
	}
	factsOut struct {
		Answer string      `json:"answer" jsonschema:"the facts that answer the question, or a short answer citing them as [n]"`
		Facts  []resultOut `json:"facts"`
	}

	contextIn struct {
		ThreadID     string `json:"thread_id,omitempty" jsonschema:"the conversation (default: the active one of this agent, opened when there is none)"`
		Input        string `json:"input,omitempty" jsonschema:"the new user message, not yet stored: relevant memories are drawn for it"`
		BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"the most tokens the context may take (default: the server's)"`
		Model        string `json:"model,omitempty" jsonschema:"the model whose tokenizer counts (default: the server's)"`
	}
	contextOut struct {
		ThreadID     string   `json:"thread_id"`
		Text         string   `json:"text" jsonschema:"the context: what was learnt about the user, the summary, relevant memories, the newest turns"`
		UsedTokens   int      `json:"used_tokens"`
		BudgetTokens int      `json:"budget_tokens"`
		Warnings     []string `json:"warnings,omitempty"`
	}

	listThreadsIn struct {
		Limit int `json:"limit,omitempty" jsonschema:"how many threads at most, newest updated first (default 20)"`
	}
	threadOut struct {
		ID           string    `json:"id"`
		Title        string    `json:"title"`
		Status       string    `json:"status" jsonschema:"active or ended"`
		AgentID      string    `json:"agent_id,omitempty"`
		MessageCount int64     `json:"message_count"`
		UpdatedAt    time.Time `json:"updated_at"`
	}
	listThreadsOut struct {
		Threads []threadOut `json:"threads"`
	}

	historyIn struct {
		ThreadID string `json:"thread_id" jsonschema:"the conversation"`
		Limit    int    `json:"limit,omitempty" jsonschema:"how many of its newest messages (default 50)"`
	}
	messageOut struct {
		Seq        int64               `json:"seq"`
		Role       string              `json:"role"`
		Content    string              `json:"content"`
		ToolCalls  []agentmem.ToolCall `json:"tool_calls,omitempty"`
		ToolCallID string              `json:"tool_call_id,omitempty"`
	}
	historyOut struct {
		ThreadID string       `json:"thread_id"`
		Messages []messageOut `json:"messages" jsonschema:"oldest first"`
	}

	appendIn struct {
		ThreadID string `json:"thread_id,omitempty" jsonschema:"the conversation, begun when it does not exist yet (default: the active one of this agent, opened when there is none)"`
		Messages []struct {
			Role    string `json:"role" jsonschema:"user, assistant, system or tool"`
			Content string `json:"content"`
		} `json:"messages" jsonschema:"the messages to store, oldest first"`
	}
	appendOut struct {
		ThreadID string `json:"thread_id"`
		FirstSeq int64  `json:"first_seq"`
		LastSeq  int64  `json:"last_seq"`
	}

	endThreadIn struct {
		ThreadID string `json:"thread_id" jsonschema:"the conversation to end: it is summarised and reflected on"`
	}
	endThreadOut struct {
		ThreadID string `json:"thread_id"`
		Status   string `json:"status"`
	}

	notesIn struct {
		Operation       string `json:"operation" jsonschema:"read, overwrite, append, prepend, replace_section_by_header, delete_section_by_header or delete_all_notes"`
		Content         string `json:"content,omitempty" jsonschema:"the Markdown text of a write"`
		SectionHeader   string `json:"section_header,omitempty" jsonschema:"the section's header, e.g. '## Goals', for replace_section_by_header and delete_section_by_header"`
		ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"fail unless the notes are at this version (0: never written)"`
	}
	notesOut struct {
		Content string `json:"content"`
		Version int64  `json:"version"`
	}

	profileOut struct {
		Found   bool   `json:"found" jsonschema:"false until a profile was synthesised"`
		Text    string `json:"text"`
		Version int    `json:"version,omitempty"`
	}

	entitiesIn struct {
		Query string `json:"query,omitempty" jsonschema:"a name or alias, e.g. 'my task workflow' (all entities when empty)"`
		Type  string `json:"type,omitempty" jsonschema:"only entities of this type: workflow, project, person…"`
		Limit int    `json:"limit,omitempty" jsonschema:"how many at most (default 20)"`
	}
	entityOut struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		Type    string   `json:"type,omitempty"`
		Aliases []string `json:"aliases,omitempty"`
	}
	entitiesOut struct {
		Entities []entityOut `json:"entities"`
	}

	forgetIn struct {
		MemoryID string `json:"memory_id" jsonschema:"the id of the memory to delete, as remember or search_memory gave it"`
	}
	forgetOut struct {
		MemoryID string `json:"memory_id"`
		Text     string `json:"text" jsonschema:"what was forgotten"`
	}
)

// specs are the tools, in the order they are listed.
var all = []Tool{
	def("remember", "Store a lasting fact about the user (a preference, a plan, who they are), to be recalled in later conversations.", adds, (*env).remember),
	def("search_memory", "Search what is remembered of the user (memories) and what was said (past messages, conversation chunks, summaries), best match first.", readOnly, (*env).search),
	def("retrieve_user_facts", "Answer a question about the user from the facts remembered about them; use it before answering anything that depends on who the user is.", readOnly, (*env).facts),
	// get_context opens the agent's session when it has none (a thread,
	// empty): a write, if a harmless one, so not read-only.
	def("get_context", "The context of a conversation as a model should see it within a token budget: the user's profile and notes, the summary, relevant memories and the newest turns.", addsOnce, (*env).context),
	def("list_threads", "The user's conversations, newest updated first.", readOnly, (*env).listThreads),
	def("get_thread_history", "The newest messages of one conversation, oldest first.", readOnly, (*env).history),
	def("append_messages", "Store messages of a conversation (the user's and yours), so that they are remembered and searchable.", adds, (*env).appendMessages),
	// Ending an ended thread changes nothing (core.Service.EndThread).
	def("end_thread", "End a conversation: it is summarised and reflected on, and what was learnt opens the next one.", addsOnce, (*env).endThread),
	// overwrite, delete_section_by_header and delete_all_notes erase.
	def("manage_notes", "Read or edit your own Markdown notes about the user (one document per agent): read, overwrite, append, prepend, replace or delete a section by its header, or delete them all.", erases, (*env).notes),
	def("get_profile", "What has been learnt about the user, as a short profile.", readOnly, (*env).profile),
	def("find_entities", "The named things the user talks about (workflows, projects, people), by name or alias.", readOnly, (*env).entities),
	// Forgetting a forgotten memory is ENOTFOUND, and changes nothing.
	def("forget", "Delete one memory of the user, by its id (find it with search_memory first).", erasesOnce, (*env).forget),
}

// The tools' annotations: MCP's hints of what a call does, which hosts
// act on (a read-only tool may run unasked; a destructive one is
// confirmed). Each says all four hints, as the defaults assume the worst
// (destructive, open world). No tool reaches beyond the user's memory:
// none is open-world.
var (
	readOnly   = Annotations{ReadOnly: true, Idempotent: true}
	adds       = Annotations{}                 // writes that add, never erase; twice adds twice
	addsOnce   = Annotations{Idempotent: true} // adds, and a second call adds nothing
	erases     = Annotations{Destructive: true}
	erasesOnce = Annotations{Destructive: true, Idempotent: true}
)

func (t *env) remember(ctx context.Context, user string, in rememberIn) (memoryOut, error) {
	m, err := t.Service.CreateMemory(ctx, user, agentmem.MemoryInput{Text: in.Text, Category: in.Category, Importance: in.Importance, AgentID: t.Agent})
	if err != nil {
		return memoryOut{}, err
	}
	return memoryOf(m), nil
}

func memoryOf(m *agentmem.Memory) memoryOut {
	return memoryOut{ID: m.ID, Text: m.Text, Kind: m.Kind, Category: m.Category, Importance: m.Importance}
}

func resultsOf(rs []agentmem.SearchResult) []resultOut {
	out := make([]resultOut, len(rs))
	for i, r := range rs {
		out[i] = resultOut{Kind: r.Kind, ID: r.ID, Text: r.Text, Score: r.Score, ThreadID: r.ThreadID}
	}
	return out
}

func (t *env) search(ctx context.Context, user string, in searchIn) (searchOut, error) {
	res, err := t.Service.Search(ctx, user, agentmem.SearchRequest{Query: in.Query, Scopes: in.Scopes, Kinds: in.Kinds, TopK: in.TopK})
	if err != nil {
		return searchOut{}, err
	}
	return searchOut{Results: resultsOf(res.Results), Warnings: res.Warnings}, nil
}

func (t *env) facts(ctx context.Context, user string, in factsIn) (factsOut, error) {
	res, err := t.Service.Facts(ctx, user, agentmem.SearchRequest{Query: in.Query, Kinds: in.Kinds})
	if err != nil {
		return factsOut{}, err
	}
	return factsOut{Answer: res.Answer, Facts: resultsOf(res.Facts)}, nil
}

// thread returns the thread a call names, else the active session's of
// the agent (opened when there is none).
func (t *env) thread(ctx context.Context, user, threadID string) (string, error) {
	return agentmem.ThreadOrSession(ctx, t.Service, user, t.Agent, threadID)
}

func (t *env) context(ctx context.Context, user string, in contextIn) (contextOut, error) {
	thread, err := t.thread(ctx, user, in.ThreadID)
	if err != nil {
		return contextOut{}, err
	}
	c, err := t.Service.BuildContext(ctx, user, thread, agentmem.ContextRequest{Input: in.Input, BudgetTokens: in.BudgetTokens, Model: in.Model, Format: agentmem.FormatText})
	if err != nil {
		return contextOut{}, err
	}
	return contextOut{ThreadID: thread, Text: c.Text, UsedTokens: c.Telemetry.UsedTokens, BudgetTokens: c.Telemetry.BudgetTokens, Warnings: c.Telemetry.Warnings}, nil
}

func (t *env) listThreads(ctx context.Context, user string, in listThreadsIn) (listThreadsOut, error) {
	ths, _, err := t.Service.FindThreads(ctx, user, agentmem.ThreadFilter{Limit: max(in.Limit, 0)})
	if err != nil {
		return listThreadsOut{}, err
	}
	out := listThreadsOut{Threads: make([]threadOut, len(ths))}
	for i, th := range ths {
		out.Threads[i] = threadOut{ID: th.ID, Title: th.Title, Status: th.Status, AgentID: th.AgentID, MessageCount: th.MessageCount, UpdatedAt: th.UpdatedAt}
	}
	return out, nil
}

func (t *env) history(ctx context.Context, user string, in historyIn) (historyOut, error) {
	if in.ThreadID == "" {
		return historyOut{}, agentmem.Errorf(agentmem.EINVALID, "thread_id is required (list_threads gives them).")
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	msgs, _, err := t.Service.FindMessages(ctx, user, in.ThreadID, agentmem.MessageFilter{Desc: true, Limit: limit})
	if err != nil {
		return historyOut{}, err
	}
	out := historyOut{ThreadID: in.ThreadID, Messages: make([]messageOut, len(msgs))}
	for i, m := range msgs {
		out.Messages[len(msgs)-1-i] = messageOut{Seq: m.Seq, Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out, nil
}

func (t *env) appendMessages(ctx context.Context, user string, in appendIn) (appendOut, error) {
	if len(in.Messages) == 0 {
		return appendOut{}, agentmem.Errorf(agentmem.EINVALID, "messages must hold at least one message.")
	}
	thread, err := t.thread(ctx, user, in.ThreadID)
	if err != nil {
		return appendOut{}, err
	}
	msgs := make([]*agentmem.Message, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = &agentmem.Message{Role: m.Role, Content: m.Content}
	}
	stored, err := agentmem.AppendBeginning(ctx, t.Service, user, t.Agent, thread, msgs)
	if err != nil {
		return appendOut{}, err
	}
	return appendOut{ThreadID: thread, FirstSeq: stored[0].Seq, LastSeq: stored[len(stored)-1].Seq}, nil
}

func (t *env) endThread(ctx context.Context, user string, in endThreadIn) (endThreadOut, error) {
	if in.ThreadID == "" {
		return endThreadOut{}, agentmem.Errorf(agentmem.EINVALID, "thread_id is required (list_threads gives them).")
	}
	th, err := t.Service.EndThread(ctx, user, in.ThreadID)
	if err != nil {
		return endThreadOut{}, err
	}
	return endThreadOut{ThreadID: th.ID, Status: th.Status}, nil
}

func (t *env) notes(ctx context.Context, user string, in notesIn) (notesOut, error) {
	n, err := t.Service.EditNotes(ctx, user, t.Agent, agentmem.NotesOp{Operation: in.Operation, Content: in.Content, SectionHeader: in.SectionHeader, ExpectedVersion: in.ExpectedVersion})
	if err != nil {
		return notesOut{}, err
	}
	if in.Operation != "read" && in.Operation != "" && t.NotesWritten != nil {
		t.NotesWritten(ctx, n.Version)
	}
	return notesOut{Content: n.Content, Version: n.Version}, nil
}

func (t *env) profile(ctx context.Context, user string, _ struct{}) (profileOut, error) {
	p, err := t.Service.FindProfile(ctx, user)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return profileOut{Text: "No profile yet: it is written once conversations have ended and been reflected on."}, nil
	} else if err != nil {
		return profileOut{}, err
	}
	return profileOut{Found: true, Text: p.Text, Version: p.Version}, nil
}

func (t *env) entities(ctx context.Context, user string, in entitiesIn) (entitiesOut, error) {
	f := agentmem.EntityFilter{Limit: max(in.Limit, 0)}
	if in.Query != "" {
		if f.Keys = agentmem.QueryKeys(in.Query); f.Keys == nil {
			return entitiesOut{}, agentmem.Errorf(agentmem.EINVALID, "query %q has no letters or digits to look up.", in.Query)
		}
	}
	if in.Type != "" {
		f.Type = &in.Type
	}
	es, _, err := t.Service.FindEntities(ctx, user, f)
	if err != nil {
		return entitiesOut{}, err
	}
	out := entitiesOut{Entities: make([]entityOut, len(es))}
	for i, e := range es {
		out.Entities[i] = entityOut{ID: e.ID, Name: e.Name, Type: e.Type, Aliases: e.Aliases}
	}
	return out, nil
}

func (t *env) forget(ctx context.Context, user string, in forgetIn) (forgetOut, error) {
	if in.MemoryID == "" {
		return forgetOut{}, agentmem.Errorf(agentmem.EINVALID, "memory_id is required (search_memory gives them).")
	}
	m, err := t.Service.FindMemoryByID(ctx, user, in.MemoryID)
	if err != nil {
		return forgetOut{}, err
	}
	if err := t.Service.DeleteMemory(ctx, user, in.MemoryID); err != nil {
		return forgetOut{}, err
	}
	return forgetOut{MemoryID: m.ID, Text: m.Text}, nil
}
