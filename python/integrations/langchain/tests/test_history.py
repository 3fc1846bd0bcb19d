"""AgentmemChatMessageHistory through LangChain's own interfaces:
RunnableWithMessageHistory over several turns with a fake chat model,
sync and async, and the history read back as LangChain and as agentmem
store it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Callable, List

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import ConfigurableFieldSpec, Runnable, RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

import agentmem
from agentmem.langchain import AgentmemChatMessageHistory

from support import wait_for

WEATHER_CALL = {"name": "weather", "args": {"city": "Lisbon", "days": 3}, "id": "call_1", "type": "tool_call"}

# The model's answers, turn by turn: a tool call, then answers.
ANSWERS: List[BaseMessage] = [
    AIMessage(content="", tool_calls=[WEATHER_CALL]),
    AIMessage(content="Day 1: Alfama and the castle."),
    AIMessage(content="Day 2: Belém and its tower."),
]


def test_import_agentmem_needs_no_framework() -> None:
    code = "import agentmem, sys; assert 'langchain_core' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def _chain(seen: List[List[BaseMessage]]) -> Runnable[Any, Any]:
    """A chain over a fake model that records what each call saw: the
    system prompt, the history, the new input."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a travel planner."), MessagesPlaceholder("history"), MessagesPlaceholder("input")]
    )

    def record(value: Any) -> Any:
        seen.append(list(value.to_messages()))
        return value

    return prompt | RunnableLambda(record) | FakeMessagesListChatModel(responses=ANSWERS)


def _turns() -> List[List[BaseMessage]]:
    return [
        [HumanMessage("Plan three days in Lisbon.")],
        [ToolMessage("sunny, 24°C", tool_call_id="call_1", name="weather")],
        [HumanMessage("And on day 2?")],
    ]


def _check_conversation(seen: List[List[BaseMessage]], history: List[BaseMessage]) -> None:
    # Each call saw the whole conversation so far, read back from agentmem.
    assert [len(s) for s in seen] == [2, 4, 6]
    last = seen[-1]
    assert [type(m) for m in last] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage, HumanMessage]
    assert isinstance(last[2], AIMessage)
    assert last[2].tool_calls == [WEATHER_CALL]

    # The stored history, as a new process reads it: in order, with
    # roles and tool calls intact.
    want: List[Any] = [
        (HumanMessage, "Plan three days in Lisbon."),
        (AIMessage, ""),
        (ToolMessage, "sunny, 24°C"),
        (AIMessage, "Day 1: Alfama and the castle."),
        (HumanMessage, "And on day 2?"),
        (AIMessage, "Day 2: Belém and its tower."),
    ]
    assert [(type(m), m.content) for m in history] == want
    assert isinstance(history[1], AIMessage) and history[1].tool_calls == [WEATHER_CALL]
    assert isinstance(history[2], ToolMessage) and history[2].tool_call_id == "call_1"
    assert history[2].name == "weather"


def _check_stored(client: agentmem.Client, thread: str) -> None:
    """agentmem holds the turns in its own roles, tool calls in OpenAI's
    shape: what its context, search and memories read."""
    stored = list(client.messages.iter(thread))
    assert [(m.seq, m.role) for m in stored] == [
        (1, "user"),
        (2, "assistant"),
        (3, "tool"),
        (4, "assistant"),
        (5, "user"),
        (6, "assistant"),
    ]
    call = stored[1].tool_calls[0]
    assert (call.id, call.type, call.function.name) == ("call_1", "function", "weather")
    assert json.loads(call.function.arguments) == {"city": "Lisbon", "days": 3}
    assert stored[2].tool_call_id == "call_1"
    assert client.threads.get(thread).agent_id == "planner"


def test_runnable_with_message_history(client: agentmem.Client) -> None:
    seen: List[List[BaseMessage]] = []
    chain = RunnableWithMessageHistory(
        _chain(seen),
        lambda session_id: AgentmemChatMessageHistory(session_id, client=client, agent_id="planner"),
        input_messages_key="input",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "trip"}}
    for turn in _turns():
        chain.invoke({"input": turn}, config)  # type: ignore[arg-type]

    history = AgentmemChatMessageHistory("trip", client=client).messages
    _check_conversation(seen, history)
    _check_stored(client, "trip")


async def test_runnable_with_message_history_async(client: agentmem.Client, async_client: agentmem.AsyncClient) -> None:
    seen: List[List[BaseMessage]] = []
    made: List[AgentmemChatMessageHistory] = []

    def history_of(session_id: str) -> AgentmemChatMessageHistory:
        h = AgentmemChatMessageHistory(session_id, async_client=async_client, agent_id="planner")
        made.append(h)
        return h

    chain = RunnableWithMessageHistory(
        _chain(seen), history_of, input_messages_key="input", history_messages_key="history"
    )
    config = {"configurable": {"session_id": "trip"}}
    for turn in _turns():
        await chain.ainvoke({"input": turn}, config)  # type: ignore[arg-type]

    # The async history reads agentmem itself: it has no sync client.
    with pytest.raises(RuntimeError, match="async_client alone"):
        _ = made[0].messages
    history = await AgentmemChatMessageHistory("trip", async_client=async_client).aget_messages()
    _check_conversation(seen, history)
    _check_stored(client, "trip")


def test_history_factory_config_user_and_conversation(server: Any, client: agentmem.Client, user: str) -> None:
    """Seed 003's shape: the user and the conversation come in each
    call's config, and each user's threads are their own."""
    seen: List[List[BaseMessage]] = []

    def history_of(user_id: str, conversation_id: str) -> AgentmemChatMessageHistory:
        return AgentmemChatMessageHistory(conversation_id, client=client, user=user_id)

    chain = RunnableWithMessageHistory(
        _chain(seen),
        history_of,
        input_messages_key="input",
        history_messages_key="history",
        history_factory_config=[
            ConfigurableFieldSpec(id="user_id", annotation=str, is_shared=True),
            ConfigurableFieldSpec(id="conversation_id", annotation=str, is_shared=True),
        ],
    )
    other = user + "-other"
    for who in (user, other):
        config = {"configurable": {"user_id": who, "conversation_id": "c1"}}
        chain.invoke({"input": [HumanMessage(f"I am {who}.")]}, config)  # type: ignore[arg-type]
    assert [m.content for m in client.messages.iter("c1", user)][0] == f"I am {user}."
    assert [m.content for m in client.messages.iter("c1", other)][0] == f"I am {other}."
    assert len(seen[1]) == 2  # the other user's call saw none of the first's history


def test_every_message_type_reads_back_as_added(client: agentmem.Client) -> None:
    messages: List[BaseMessage] = [
        SystemMessage("Be brief.", id="m0"),
        HumanMessage("Hi, I'm Sam.", name="sam", id="m1"),
        HumanMessage(
            [{"type": "text", "text": "What is on this picture?"}, {"type": "image_url", "image_url": {"url": "x"}}],
            id="m2",
        ),
        AIMessage(
            "Let me look.",
            id="m3",
            tool_calls=[{"name": "lookup", "args": {"q": "x", "n": [1, 2]}, "id": "c1", "type": "tool_call"}],
            invalid_tool_calls=[
                {"name": "broken", "args": "{not json", "id": "c2", "error": None, "type": "invalid_tool_call"}
            ],
            additional_kwargs={"refusal": None},
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        ),
        ToolMessage("not found", tool_call_id="c1", name="lookup", status="error", artifact={"raw": [1]}, id="m4"),
        FunctionMessage("42", name="legacy_fn", id="m5"),
        ChatMessage("Looks fine.", role="critic", id="m6"),
        ChatMessage("As the assistant.", role="assistant", id="m7"),
        AIMessage("Done.", id="m8"),
    ]
    history = AgentmemChatMessageHistory("all", client=client)
    history.add_messages(messages)
    assert AgentmemChatMessageHistory("all", client=client).messages == messages

    stored = list(client.messages.iter("all"))
    roles = ["system", "user", "user", "assistant", "tool", "tool", "user", "assistant", "assistant"]
    assert [m.role for m in stored] == roles
    # Content blocks are stored as their text, which agentmem searches.
    assert stored[2].content == "What is on this picture?"


def test_ids_and_messages_from_elsewhere(client: agentmem.Client) -> None:
    """A message without LangChain's id reads back with agentmem's; a
    message another face stored (REST, the proxy) reads as LangChain's,
    a tool call whose arguments are not JSON as an invalid one."""
    client.threads.create(id="rest")
    stored = client.messages.append(
        "rest",
        [
            {"role": "user", "content": "Hello", "name": "ann"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": "oops"}}],
            },
            {"role": "tool", "content": "r", "tool_call_id": "c9"},
        ],
    )
    history = AgentmemChatMessageHistory("rest", client=client)
    history.add_user_message("Again")
    got = history.messages
    assert [m.id for m in got[:3]] == [m.id for m in stored]
    assert got[0] == HumanMessage("Hello", name="ann", id=stored[0].id)
    assert isinstance(got[1], AIMessage)
    assert got[1].tool_calls == []
    assert [(c["name"], c["args"], c["id"]) for c in got[1].invalid_tool_calls] == [("f", "oops", "c9")]
    assert got[2] == ToolMessage("r", tool_call_id="c9", id=stored[2].id)
    assert isinstance(got[3], HumanMessage) and got[3].content == "Again" and got[3].id


def test_clear_deletes_the_thread(client: agentmem.Client) -> None:
    history = AgentmemChatMessageHistory("s1", client=client)
    assert history.messages == []  # no thread yet
    history.clear()  # nothing to clear
    history.add_messages([HumanMessage("one"), AIMessage("two")])
    history.clear()
    assert history.messages == []
    with pytest.raises(agentmem.NotFoundError):
        client.threads.get("s1")
    history.add_messages([HumanMessage("three")])  # the same ID begins afresh
    assert [m.content for m in history.messages] == ["three"]


async def test_aclear(async_client: agentmem.AsyncClient) -> None:
    history = AgentmemChatMessageHistory("s2", async_client=async_client)
    await history.aadd_messages([HumanMessage("one")])
    await history.aclear()
    assert await history.aget_messages() == []
    await history.aadd_messages([HumanMessage("two")])
    assert [m.content for m in await history.aget_messages()] == ["two"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_active_session(
    kind: str, client: agentmem.Client, async_client: agentmem.AsyncClient, user: str
) -> None:
    """With no session_id, the history is the agent's active session:
    another process finds the same thread; clear ends it and the session
    goes on in a new one."""
    make: Callable[[], AgentmemChatMessageHistory]
    if kind == "sync":

        def make() -> AgentmemChatMessageHistory:
            return AgentmemChatMessageHistory(client=client, agent_id="coach")

    else:

        def make() -> AgentmemChatMessageHistory:
            return AgentmemChatMessageHistory(async_client=async_client, agent_id="coach")

    first = make()
    await first.aadd_messages([HumanMessage("Remind me to stretch."), AIMessage("Will do.")])
    thread = first.session_id
    assert thread and client.sessions.get("coach").thread_id == thread

    second = make()
    assert [m.content for m in await second.aget_messages()] == ["Remind me to stretch.", "Will do."]
    assert second.session_id == thread

    await second.aclear()
    assert second.session_id != thread
    assert client.threads.get(thread).status == "ended"
    assert client.sessions.get("coach").thread_id == second.session_id
    assert await make().aget_messages() == []


def test_context_tokens(client: agentmem.Client) -> None:
    """With context_tokens, the history a chain gets is agentmem's context:
    the memories learned in another thread, then the newest turns within
    the budget; the thread itself keeps everything."""
    client.threads.create(id="earlier")
    client.messages.append("earlier", [{"role": "user", "content": "I am vegetarian and I live in Porto."}])
    wait_for(
        "agentmem to learn the user is vegetarian",
        lambda: "User is vegetarian." in [m.text for m in client.memories.iter()],
    )
    client.threads.create(id="long")
    turns: List[Any] = []
    for i in range(30):
        turns.append({"role": "user", "content": f"Question {i}: what does chapter {i} of the guide say about Porto?"})
        turns.append({"role": "assistant", "content": f"Chapter {i} is about the {i}th district of the city."})
    turns.append({"role": "user", "content": "Where should I eat tonight?"})
    turns.append({"role": "assistant", "content": "Somewhere near the river."})
    client.messages.append("long", turns)

    seen: List[List[BaseMessage]] = []
    histories: List[AgentmemChatMessageHistory] = []

    def history_of(session_id: str) -> AgentmemChatMessageHistory:
        histories.append(AgentmemChatMessageHistory(session_id, client=client, context_tokens=300, model="gpt-4"))
        return histories[-1]

    chain = RunnableWithMessageHistory(
        _chain(seen), history_of, input_messages_key="input", history_messages_key="history"
    )
    chain.invoke({"input": [HumanMessage("Which dish there?")]}, {"configurable": {"session_id": "long"}})

    saw = seen[0]
    assert isinstance(saw[0], SystemMessage) and saw[0].content == "You are a travel planner."
    assert isinstance(saw[1], SystemMessage) and "User is vegetarian." in str(saw[1].content)
    assert 4 < len(saw) < len(turns)
    assert [m.content for m in saw[-3:]] == [
        "Where should I eat tonight?",
        "Somewhere near the river.",
        "Which dish there?",
    ]
    telemetry = histories[0].telemetry
    assert telemetry is not None and telemetry.budget_tokens == 300 and telemetry.used_tokens <= 300
    assert len(list(client.messages.iter("long"))) == len(turns) + 2
