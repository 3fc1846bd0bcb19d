"""Memory for Microsoft Agent Framework agents: AgentmemContextProvider.

    from agent_framework import Agent
    import agentmem
    from agentmem.agent_framework import AgentmemContextProvider

    memory = AgentmemContextProvider(agentmem.AsyncClient("http://127.0.0.1:8080"), user="alice", agent_id="advisor")
    agent = Agent(client=chat_client, instructions="You are a financial advisor.", context_providers=[memory])
    session = agent.create_session()
    await agent.run("I am 45 and want to retire at 60.", session=session)
    await memory.end_session(session)   # reflection, then the profile: the next session opens with it

Before each run it asks agentmem for the context of the session's thread
(seed 001's memory keeper): the session's init block (the user's profile,
the agent's notes, the last sessions' summaries, the entities named) and
the memories that bear on the input become instructions, and the thread's
turns that fit the token budget (older ones summarised) come before the
input. After each run it records the turn, the user's messages and the
agent's answer, in the thread, where agentmem learns from them. Each
AgentSession is a thread of agentmem (its ID the session's, unless the
provider is given one); ``end_session`` ends it. With ``facts_tool`` the
agent also gets seed 001's ``retrieve_user_facts`` tool.

Needs agent-framework-core 1.x (``pip install 'agentmem[agent-framework]'``);
``import agentmem`` alone never imports it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

try:
    from agent_framework import AgentSession, HistoryProvider, Message, SessionContext, tool
except ImportError as e:  # pragma: no cover: depends on the environment
    raise ImportError(
        "agentmem.agent_framework needs Microsoft Agent Framework: pip install 'agentmem[agent-framework]'"
    ) from e

from ._async_client import AsyncClient
from ._errors import ConflictError, NotFoundError
from ._types import ChatMessage, MessageParam

__all__ = ["AgentmemContextProvider"]


class AgentmemContextProvider(HistoryProvider):  # type: ignore[misc,unused-ignore]  # Any without the framework
    """A context provider of Agent Framework backed by agentmem.

    It is a HistoryProvider, the kind of context provider that keeps a
    session's history: agentmem keeps it here (so the agent adds no
    InMemoryHistoryProvider of its own, which would send the turns twice),
    and hands back the newest turns that fit ``budget_tokens``, the older
    ones summarised.

    ``client`` is an agentmem.AsyncClient; ``user`` the user whose memory
    it is (the client's user when None); ``agent_id`` the agent of the
    threads it makes (whose notes the context reads). ``thread_id`` pins
    every session to one thread (by default each session is a thread, of
    the session's ID). ``budget_tokens``, ``model``, ``strategy`` and
    ``context_options`` (any other field of
    ``client.threads.context``: summarize, include, prompt…) shape the
    context; the server's defaults otherwise. ``facts_tool`` adds the
    ``retrieve_user_facts`` tool (agentmem's facts: a question about the
    user answered from what it knows, citing it).

    With a chat client that keeps the conversation itself (the Responses
    API with ``store=True``), give the agent ``store=False`` in its
    options: the framework then loads the history from here.
    """

    DEFAULT_SOURCE_ID = "agentmem"

    def __init__(
        self,
        client: AsyncClient,
        *,
        user: Optional[str] = None,
        agent_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        source_id: str = DEFAULT_SOURCE_ID,
        budget_tokens: Optional[int] = None,
        model: Optional[str] = None,
        strategy: Optional[str] = None,
        context_options: Optional[Mapping[str, Any]] = None,
        facts_tool: bool = False,
    ) -> None:
        super().__init__(source_id, load_messages=True, store_inputs=True, store_outputs=True)
        self.client = client
        self.user = user or client.user
        if not self.user:
            raise ValueError("AgentmemContextProvider needs a user: pass user=, or a client of one")
        self.agent_id = agent_id
        self.thread_id = thread_id
        self.context_options: Dict[str, Any] = dict(context_options or {})
        for name, value in (("budget_tokens", budget_tokens), ("model", model), ("strategy", strategy)):
            if value is not None:
                self.context_options[name] = value
        self.facts_tool = facts_tool

    # The provider's two moments.

    async def before_run(
        self, *, agent: Any, session: AgentSession, context: SessionContext, state: Dict[str, Any]
    ) -> None:
        """Adds agentmem's context for the input: the system part (init
        block, memories) as instructions, the thread's turns as messages
        before the input."""
        thread_id = await self._thread(session, state)
        query = _text_of(m for m in context.input_messages if m.role == "user")
        built = await self.client.threads.context(
            thread_id, self.user, query=query or None, format="messages", **self.context_options
        )
        system: List[str] = []
        history: List[Message] = []
        for m in built.messages:
            if m.role == "system" and not history:
                system.append(m.content)
            else:
                converted = _message(m)
                if converted is not None:
                    history.append(converted)
        if system:
            context.extend_instructions(self.source_id, "\n\n".join(system))
        if history:
            context.extend_messages(self, history)
        if self.facts_tool:
            context.extend_tools(self.source_id, [self._facts_tool()])

    async def after_run(
        self, *, agent: Any, session: AgentSession, context: SessionContext, state: Dict[str, Any]
    ) -> None:
        """Records the turn in the thread: the user's messages, then the
        agent's answer (text; tool calls and results are left out), in one
        append, so that the turn is stored whole or not at all."""
        turn: List[Message] = list(context.input_messages)
        if context.response is not None:
            turn += list(context.response.messages or [])
        await self.save_messages(session.session_id, turn, state=state, session=session)

    # HistoryProvider's storage, which the agent also calls itself when it
    # persists each model call (require_per_service_call_history_persistence).

    async def get_messages(
        self, session_id: Optional[str], *, state: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> List[Message]:
        """The thread's turns that fit the context (no init block)."""
        thread_id = (state or {}).get("thread_id") or self.thread_id or session_id
        if not thread_id:
            return []
        try:
            built = await self.client.threads.context(thread_id, self.user, format="messages", **self.context_options)
        except NotFoundError:
            return []
        out = [_message(m) for m in built.messages if m.role != "system"]
        return [m for m in out if m is not None]

    async def save_messages(
        self,
        session_id: Optional[str],
        messages: Sequence[Message],
        *,
        state: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        """Appends the messages' text (user, assistant and system ones) to
        the thread."""
        batch: List[MessageParam] = []
        for m in messages:
            text = m.text
            if m.role in ("user", "assistant", "system") and text:
                param: MessageParam = {"role": m.role, "content": text}
                if m.author_name and m.role == "user":
                    param["name"] = m.author_name
                batch.append(param)
        if not batch:
            return
        session = kwargs.get("session")
        if session is not None:
            thread_id = await self._thread(session, state if state is not None else {})
        else:
            thread_id = await self._ensure((state or {}).get("thread_id") or self.thread_id or str(session_id))
        await self.client.messages.append(thread_id, batch, self.user)

    # Sessions.

    async def end_session(self, session: AgentSession) -> None:
        """Ends the session's thread: agentmem summarises it, reflects on
        it and updates the user's profile in the background, and the next
        session opens with what it learned (seed 001's session end).
        Ending a thread again after new turns is allowed."""
        state = session.state.setdefault(self.source_id, {})
        await self.client.threads.end(await self._thread(session, state), self.user)

    def thread_of(self, session: AgentSession) -> str:
        """The agentmem thread ID of the session."""
        state = session.state.get(self.source_id) or {}
        return str(state.get("thread_id") or self.thread_id or session.session_id)

    async def _thread(self, session: AgentSession, state: Dict[str, Any]) -> str:
        """The session's thread, made on first use; its ID kept in the
        provider's state of the session, which a session store persists."""
        thread_id = state.get("thread_id")
        if thread_id:
            return str(thread_id)
        thread_id = await self._ensure(self.thread_id or session.session_id)
        state["thread_id"] = thread_id
        return thread_id

    async def _ensure(self, thread_id: str) -> str:
        try:
            await self.client.threads.create(self.user, id=thread_id, agent_id=self.agent_id)
        except ConflictError:
            pass  # made before: a session restored, or a thread given
        return thread_id

    def _facts_tool(self) -> Any:
        client, user = self.client, self.user

        @tool(name="retrieve_user_facts", approval_mode="never_require")  # type: ignore[untyped-decorator,unused-ignore]
        async def retrieve_user_facts(query: str) -> str:
            """Answers a question about the user from what is remembered of
            them (facts they told, insights, past conversations), citing
            it; says so when nothing is known."""
            return (await client.facts(query, user)).answer

        return retrieve_user_facts


def _text_of(messages: Any) -> str:
    return "\n".join(m.text for m in messages if m.text)


def _message(m: ChatMessage) -> Optional[Message]:
    """A message of agentmem's context as Agent Framework's: its text;
    tool calls and their results are left out (the model sees the turns),
    and so is a message with no text."""
    if m.role == "tool" or not m.content:
        return None
    return Message(m.role, [m.content], author_name=m.name or None)
