"""AgentmemChatStore through LlamaIndex's interfaces: seed 002's
ChatMemoryBuffer over it in a SimpleChatEngine with a MockLLM, every
BaseChatStore method, sync and async, messages of every kind read back as
they were added."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import List

from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import ChatMemoryBuffer

import agentmem
from agentmem.llama_index import AgentmemChatStore


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def _assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def test_import_agentmem_needs_no_framework() -> None:
    code = "import agentmem, sys; assert 'llama_index' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_chat_memory_buffer_in_a_chat_engine(client: agentmem.Client) -> None:
    """Seed 002: a ChatMemoryBuffer whose store is agentmem, keyed by the
    session; a new process (a new store and buffer) picks the
    conversation up where it was."""

    def engine(llm: MockLLMWithChatMemoryOfLastCall) -> SimpleChatEngine:
        store = AgentmemChatStore(client=client, agent_id="docmind")
        memory = ChatMemoryBuffer.from_defaults(token_limit=3000, chat_store=store, chat_store_key="session-1")
        return SimpleChatEngine.from_defaults(llm=llm, memory=memory)

    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=2)
    first = engine(llm)
    first.chat("Summarise the report.")
    first.chat("And its conclusion?")

    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=2)
    engine(llm).chat("Who wrote it?")
    assert llm.last_chat_messages is not None
    assert [(m.role, m.content) for m in llm.last_chat_messages] == [
        (MessageRole.USER, "Summarise the report."),
        (MessageRole.ASSISTANT, "text text"),
        (MessageRole.USER, "And its conclusion?"),
        (MessageRole.ASSISTANT, "text text"),
        (MessageRole.USER, "Who wrote it?"),
    ]
    stored = list(client.messages.iter("session-1"))
    assert [m.role for m in stored] == ["user", "assistant"] * 3
    assert client.threads.get("session-1").agent_id == "docmind"


def test_chat_memory_buffer_token_limit(client: agentmem.Client) -> None:
    """LlamaIndex trims what it reads from the store to its token limit."""
    store = AgentmemChatStore(client=client)
    memory = ChatMemoryBuffer.from_defaults(token_limit=40, chat_store=store, chat_store_key="long")
    for i in range(20):
        memory.put(_user(f"Message number {i} about the quarterly report."))
    got = memory.get()
    assert 0 < len(got) < 20 and got[-1].content == "Message number 19 about the quarterly report."
    assert len(store.get_messages("long")) == 20


MESSAGES: List[ChatMessage] = [
    ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
    _user("Plan three days in Lisbon."),
    ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[ToolCallBlock(tool_call_id="c1", tool_name="weather", tool_kwargs={"city": "Lisbon", "days": 3})],
    ),
    ChatMessage(role=MessageRole.TOOL, content="sunny", additional_kwargs={"tool_call_id": "c1", "name": "weather"}),
    ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        additional_kwargs={
            "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
        },
    ),
    ChatMessage(role=MessageRole.TOOL, content="ok", additional_kwargs={"tool_call_id": "c2"}),
    _assistant("Day 1: Alfama."),
    ChatMessage(
        role=MessageRole.USER, blocks=[TextBlock(text="And this?"), ImageBlock(url="http://example.com/a.png")]
    ),
    ChatMessage(role=MessageRole.DEVELOPER, content="Answer in English."),
    ChatMessage(role=MessageRole.CHATBOT, content="Sure."),
]


def test_messages_read_back_as_added(client: agentmem.Client) -> None:
    store = AgentmemChatStore(client=client)
    store.set_messages("all", MESSAGES)
    assert AgentmemChatStore(client=client).get_messages("all") == MESSAGES

    stored = list(client.messages.iter("all"))
    roles = ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user", "system", "assistant"]
    assert [m.role for m in stored] == roles
    # Tool calls in agentmem's (OpenAI's) shape, whichever way LlamaIndex
    # held them: what agentmem's context gives a model.
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in stored[2].tool_calls] == [
        ("c1", "weather", {"city": "Lisbon", "days": 3})
    ]
    assert [(c.id, c.function.name) for c in stored[4].tool_calls] == [("c2", "f")]
    assert (stored[3].tool_call_id, stored[3].name) == ("c1", "weather")
    assert stored[7].content == "And this?"


def test_messages_from_elsewhere(client: agentmem.Client) -> None:
    client.threads.create(id="rest")
    client.messages.append(
        "rest",
        [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
            },
            {"role": "tool", "content": "r", "tool_call_id": "c9", "name": "f"},
        ],
    )
    assert AgentmemChatStore(client=client).get_messages("rest") == [
        _user("Hi"),
        ChatMessage(
            role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(tool_call_id="c9", tool_name="f", tool_kwargs={"a": 1})]
        ),
        ChatMessage(role=MessageRole.TOOL, content="r", additional_kwargs={"tool_call_id": "c9", "name": "f"}),
    ]


def test_store_methods(client: agentmem.Client) -> None:
    store = AgentmemChatStore(client=client, agent_id="docmind")
    assert store.get_messages("k") == []
    assert store.delete_messages("k") is None
    assert store.delete_last_message("k") is None

    store.add_message("k", _user("one"))
    store.add_message("k", _assistant("two"))
    first = client.messages.list("k").data

    # A set that extends what is stored appends: the stored messages stay.
    store.set_messages("k", [_user("one"), _assistant("two"), _user("three")])
    again = client.messages.list("k").data
    assert [m.id for m in again[:2]] == [m.id for m in first] and again[2].seq == 3

    # Deleting one message rewrites the thread; each message keeps its time.
    assert store.delete_message("k", 1) == _assistant("two")
    assert [m.content for m in store.get_messages("k")] == ["one", "three"]
    rewritten = client.messages.list("k").data
    assert rewritten[0].created_at == first[0].created_at
    assert client.threads.get("k").agent_id == "docmind"
    assert store.delete_message("k", 5) is None

    store.add_message("k", _assistant("in between"), idx=1)
    assert [m.content for m in store.get_messages("k")] == ["one", "in between", "three"]
    assert store.delete_last_message("k") == _user("three")

    # A set of other messages replaces them.
    store.set_messages("k", [_user("new")])
    assert store.get_messages("k") == [_user("new")]

    store.add_message("k2", _user("elsewhere"))
    other = AgentmemChatStore(client=client, agent_id="other")
    other.add_message("k3", _user("another agent's"))
    assert sorted(store.get_keys()) == ["k", "k2"]
    assert other.get_keys() == ["k3"]
    assert sorted(AgentmemChatStore(client=client).get_keys()) == ["k", "k2", "k3"]

    assert store.delete_messages("k") == [_user("new")]
    assert store.get_messages("k") == []


def test_async_methods(server: object, user: str, client: agentmem.Client) -> None:
    async def run() -> None:
        async with agentmem.AsyncClient(server.url, user=user) as ac:
            store = AgentmemChatStore(async_client=ac)
            await store.aset_messages("a", MESSAGES[:2])
            await store.async_add_message("a", _assistant("three"))
            await store.aadd_messages("a", [_user("four"), _assistant("five")])
            assert await store.aget_messages("a") == [
                *MESSAGES[:2],
                _assistant("three"),
                _user("four"),
                _assistant("five"),
            ]
            assert await store.adelete_message("a", 0) == MESSAGES[0]
            assert await store.adelete_last_message("a") == _assistant("five")
            assert await store.aget_keys() == ["a"]
            assert len(await store.adelete_messages("a") or []) == 3
            assert await store.aget_messages("a") == []

    asyncio.run(run())
    assert client.threads.list().data == []


def test_serialises_without_its_clients(client: agentmem.Client) -> None:
    store = AgentmemChatStore(client=client, user="alice", agent_id="docmind")
    memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="s")
    dumped = memory.to_dict()["chat_store"]
    assert dumped == {"user": "alice", "agent_id": "docmind", "class_name": "AgentmemChatStore"}
