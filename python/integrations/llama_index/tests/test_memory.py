"""AgentmemMemory through LlamaIndex's interfaces: a SimpleChatEngine and a
FunctionAgent with LlamaIndex's mock LLMs, put/get round trips, the token
budget, and memories learned in an earlier thread."""

from __future__ import annotations

import asyncio
import json
from typing import Any, List

import pytest
from llama_index.core import get_tokenizer
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockFunctionCallingLLMWithChatMemoryOfLastCall, MockLLMWithChatMemoryOfLastCall
from llama_index.core.tools import FunctionTool

import agentmem
from agentmem.llama_index import AgentmemMemory

from support import wait_for


def test_chat_engine_turns(client: agentmem.Client) -> None:
    """put/get through a chat engine, and the thread read back whole by a
    new memory (another process)."""
    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=2)
    memory = AgentmemMemory.from_defaults(client=client, chat_store_key="chat", token_limit=2000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat("Summarise the report.")
    engine.chat("And its conclusion?")
    assert llm.last_chat_messages is not None
    assert [(m.role, m.content) for m in llm.last_chat_messages if m.role != MessageRole.SYSTEM] == [
        (MessageRole.USER, "Summarise the report."),
        (MessageRole.ASSISTANT, "text text"),
        (MessageRole.USER, "And its conclusion?"),
    ]

    again = AgentmemMemory.from_defaults(client=client, chat_store_key="chat")
    assert [(m.role, m.content) for m in again.get_all()] == [
        (MessageRole.USER, "Summarise the report."),
        (MessageRole.ASSISTANT, "text text"),
        (MessageRole.USER, "And its conclusion?"),
        (MessageRole.ASSISTANT, "text text"),
    ]
    again.reset()
    assert again.get_all() == [] and again.get() == []


def test_memories_of_an_earlier_thread(client: agentmem.Client) -> None:
    """What the user told in one thread is in the context of another:
    agentmem's relevant memories, as a system message."""
    client.threads.create(id="earlier")
    client.messages.append("earlier", [{"role": "user", "content": "I am vegetarian and I live in Porto."}])
    wait_for("agentmem to learn the user is vegetarian", lambda: _knows(client, "User is vegetarian."))

    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=2)
    memory = AgentmemMemory.from_defaults(client=client, chat_store_key="today", token_limit=2000)
    SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat("Where should I eat tonight?")
    assert llm.last_chat_messages is not None
    first, *rest = llm.last_chat_messages
    assert first.role == MessageRole.SYSTEM and first.content is not None
    assert "User is vegetarian." in first.content
    assert [(m.role, m.content) for m in rest] == [(MessageRole.USER, "Where should I eat tonight?")]
    assert memory.telemetry is not None and memory.telemetry.memories

    # Asked about something else, the memory is not drawn.
    memory.put(ChatMessage(role=MessageRole.USER, content="How do I reverse a list in python?"))
    assert all("vegetarian" not in (m.content or "") for m in memory.get())
    # An input given to get() is what the memories are drawn for.
    assert any("vegetarian" in (m.content or "") for m in memory.get(input="Any dinner ideas for me?"))


def _knows(client: agentmem.Client, text: str) -> bool:
    return text in [m.text for m in client.memories.iter()]


def test_token_budget(client: agentmem.Client) -> None:
    """get() returns agentmem's context within token_limit (less what the
    caller adds): the newest turns that fit, counted by the model's
    tokenizer (gpt-4's is LlamaIndex's own, cl100k)."""
    client.threads.create(id="long")
    turns: List[Any] = []
    for i in range(30):
        turns.append({"role": "user", "content": f"Question {i}: what does chapter {i} of the report say about costs?"})
        turns.append({"role": "assistant", "content": f"Chapter {i} says costs rose by {i} percent over the year."})
    client.messages.append("long", turns)

    memory = AgentmemMemory.from_defaults(client=client, chat_store_key="long", token_limit=300, model="gpt-4")
    got = memory.get()
    tokens = get_tokenizer()
    assert sum(len(tokens(m.content or "")) for m in got) <= 300
    assert memory.telemetry is not None
    assert memory.telemetry.budget_tokens == 300 and memory.telemetry.used_tokens <= 300
    assert 0 < len(got) < 60
    assert got[-1].content == turns[-1]["content"]
    assert got[0].content != turns[0]["content"]

    less = memory.get(initial_token_count=100)
    assert memory.telemetry.budget_tokens == 200 and len(less) < len(got)
    with pytest.raises(ValueError, match="exceeds token limit"):
        memory.get(initial_token_count=300)


def test_function_agent(client: agentmem.Client) -> None:
    """A FunctionAgent's turn (its tool call, the tool's result, its
    answer) stored in agentmem with agentmem's roles, and read back as
    LlamaIndex put it."""

    def weather(city: str = "Lisbon") -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    llm = MockFunctionCallingLLMWithChatMemoryOfLastCall()
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(weather)], llm=llm)
    memory = AgentmemMemory.from_defaults(client=client, chat_store_key="agent")

    async def run() -> Any:
        return await agent.run(user_msg="What is the weather?", memory=memory)

    result = asyncio.run(run())
    assert str(result) == "Tool calls complete."

    stored = list(client.messages.iter("agent"))
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    (call,) = stored[1].tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("weather", {"city": "Lisbon"})
    assert stored[2].tool_call_id == call.id and stored[2].content == "sunny in Lisbon"

    history = AgentmemMemory.from_defaults(client=client, chat_store_key="agent").get_all()
    assert isinstance(history[1].blocks[0], ToolCallBlock) and history[1].blocks[0].tool_call_id == call.id
    assert history[2].additional_kwargs["tool_call_id"] == call.id
    # The agent's second call saw the tool's result after its call, as the
    # context gives them back.
    assert llm.last_chat_messages is not None
    assert [m.role for m in llm.last_chat_messages][-3:] == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL]


def test_async(server: Any, user: str, client: agentmem.Client) -> None:
    async def run() -> List[ChatMessage]:
        async with agentmem.AsyncClient(server.url, user=user) as ac:
            memory = AgentmemMemory.from_defaults(async_client=ac, chat_store_key="a", token_limit=500)
            await memory.aput(ChatMessage(role=MessageRole.USER, content="I am vegetarian."))
            await memory.aput_messages([ChatMessage(role=MessageRole.ASSISTANT, content="Noted.")])
            assert [m.content for m in await memory.aget_all()] == ["I am vegetarian.", "Noted."]
            await memory.aset([ChatMessage(role=MessageRole.USER, content="Start again.")])
            got = await memory.aget()
            await memory.areset()
            assert await memory.aget() == []
            return got

    got = asyncio.run(run())
    assert [m.content for m in got if m.role != MessageRole.SYSTEM] == ["Start again."]


def test_chat_history_of_from_defaults(client: agentmem.Client) -> None:
    history = [
        ChatMessage(role=MessageRole.USER, content="one"),
        ChatMessage(role=MessageRole.ASSISTANT, content="two"),
    ]
    memory = AgentmemMemory.from_defaults(history, client=client, chat_store_key="h")
    assert memory.get_all() == history
    assert [m.role for m in client.messages.iter("h")] == ["user", "assistant"]
