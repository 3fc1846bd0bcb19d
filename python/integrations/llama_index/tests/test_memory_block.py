"""AgentmemMemoryBlock in LlamaIndex's Memory: the memories agentmem
learned in an earlier thread in the memory block of another, and the
messages Memory flushes given to agentmem."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory

import agentmem
from agentmem.llama_index import AgentmemMemoryBlock

from support import wait_for


@pytest.fixture
def vegetarian(client: agentmem.Client) -> None:
    """A user who said, in an earlier thread, that they are vegetarian,
    which agentmem learned (in the background)."""
    client.threads.create(id="earlier")
    client.messages.append("earlier", [{"role": "user", "content": "I am vegetarian and I live in Porto."}])
    wait_for(
        "agentmem to learn the user is vegetarian",
        lambda: "User is vegetarian." in [m.text for m in client.memories.iter()],
    )


def _system(messages: Any) -> str:
    first = messages[0]
    assert first.role == MessageRole.SYSTEM
    return str(first.content)


def test_memories_in_the_block(client: agentmem.Client, vegetarian: None) -> None:
    memory = Memory.from_defaults(
        session_id="today", token_limit=2000, memory_blocks=[AgentmemMemoryBlock(client=client)]
    )
    memory.put(ChatMessage(role=MessageRole.USER, content="Where should I eat tonight?"))
    got = memory.get()
    system = _system(got)
    assert "<agentmem>" in system and "- User is vegetarian." in system
    assert [(m.role, m.content) for m in got[1:]] == [(MessageRole.USER, "Where should I eat tonight?")]

    # A question the memories do not bear on draws none of them.
    memory.put(ChatMessage(role=MessageRole.USER, content="How do I reverse a list in python?"))
    assert all("vegetarian" not in (m.content or "") for m in memory.get())


def test_profile(client: agentmem.Client, vegetarian: None) -> None:
    client.profile.refresh()
    block = AgentmemMemoryBlock(client=client, profile=True, kinds=["memories"], top_k=1)
    memory = Memory.from_defaults(session_id="today", token_limit=2000, memory_blocks=[block])
    memory.put(ChatMessage(role=MessageRole.USER, content="Hello!"))
    system = _system(memory.get())
    assert "User lives in Porto." in system  # from the profile: a greeting draws no memory


def test_flushed_messages_reach_agentmem(client: agentmem.Client) -> None:
    """What Memory flushes from its short-term queue is appended to the
    session's agentmem thread, where agentmem learns from it."""
    memory = Memory.from_defaults(
        session_id="s1",
        token_limit=60,
        token_flush_size=20,
        chat_history_token_ratio=0.5,
        memory_blocks=[AgentmemMemoryBlock(client=client)],
    )
    memory.put(ChatMessage(role=MessageRole.USER, content="I am allergic to peanuts, please remember that."))
    for i in range(6):
        memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=f"Noted, answer number {i} of a long chat."))
        memory.put(ChatMessage(role=MessageRole.USER, content=f"Tell me more, question number {i}."))
    stored = [m.content for m in client.messages.iter("s1")]
    assert stored[0] == "I am allergic to peanuts, please remember that."
    wait_for(
        "agentmem to learn the allergy",
        lambda: any("peanut" in m.text for m in client.memories.iter()),
    )


def test_async_client(server: Any, user: str, client: agentmem.Client, vegetarian: None) -> None:
    async def run() -> str:
        async with agentmem.AsyncClient(server.url, user=user) as ac:
            memory = Memory.from_defaults(
                session_id="today", token_limit=2000, memory_blocks=[AgentmemMemoryBlock(async_client=ac)]
            )
            await memory.aput(ChatMessage(role=MessageRole.USER, content="Any dinner ideas?"))
            return _system(await memory.aget())

    assert "- User is vegetarian." in asyncio.run(run())
