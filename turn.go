package agentmem

// Memory modes of a model call made through agentmem (TurnRequest.Mode):
// how much of the context agentmem builds.
const (
	// MemoryAuto is MemoryAugment when the client sends earlier turns (an
	// assistant message among its messages), MemoryFull when it sends only
	// the new turn.
	MemoryAuto = "auto"
	// MemoryFull: agentmem builds the whole context from the stored thread
	// (the client's system prompt first, then the initialisation block,
	// summary, relevant memories and the newest turns within the budget).
	MemoryFull = "full"
	// MemoryAugment: the client's own messages are kept, with the
	// initialisation block, relevant memories (and the summary, when the
	// client does not hold the thread's start) injected after its system
	// prompt, and its oldest turns trimmed to the budget.
	MemoryAugment = "augment"
	// MemoryOff: the request goes to the model as it is; the turns are
	// still recorded.
	MemoryOff = "off"
)

// DefaultAgent is the agent of a session when a model call names none.
const DefaultAgent = "default"

// TurnRequest is a model call made through agentmem (the OpenAI-compatible
// proxy): the messages a client sends, to be stored and given memory.
type TurnRequest struct {
	// ThreadID is the thread; "" means the active session of the user and
	// AgentID, opened when there is none. A thread that does not exist is
	// created with this ID.
	ThreadID string `json:"thread_id,omitempty"`
	// Continue requires ThreadID to name a thread of the user
	// (ENOTFOUND otherwise): a call that continues an earlier one.
	Continue bool   `json:"continue,omitempty"`
	AgentID  string `json:"agent_id,omitempty"` // "" is DefaultAgent
	// Messages are the client's messages without its system prompt,
	// oldest first: the whole history it resends, or only the new turn.
	// Those already stored (matching the thread's newest messages) are
	// not stored again.
	Messages []*Message `json:"messages"`
	// Mode is one of the Memory* modes ("" is MemoryAuto).
	Mode string `json:"mode,omitempty"`
	// Context is the context's policy: Model, BudgetTokens, and System,
	// the client's own system prompt. Its Input is not used: the new turn
	// is stored first, and the memories are those relevant to the newest
	// user message.
	Context ContextRequest `json:"context"`
}

// Turn is what BeginTurn did: the thread, what it stored, and the context
// to send the model.
type Turn struct {
	Thread *Thread `json:"thread"`
	Mode   string  `json:"mode"` // the mode applied: auto resolved to full or augment
	// Stored are the client's messages stored by this call; Held how many
	// of the client's messages were stored already (the resent history).
	Stored []*Message `json:"stored"`
	Held   int        `json:"held"`
	// Context is the context, in the messages format: with MemoryAugment
	// its last Telemetry.IncludedMessages messages are the newest of the
	// client's messages, kept. Nil with MemoryOff.
	Context *Context `json:"context,omitempty"`
}
