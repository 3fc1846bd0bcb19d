"""agentmem's memory tools as LangChain tools: LangChain's standard tool
tests, invoke with arguments and with a model's ToolCall, errors handed
back to the model, the schemas a model is given."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

import agentmem
from agentmem.langchain import atools, tools


class _SearchMemory:
    @pytest.fixture(autouse=True)
    def _tool(self, client: agentmem.Client) -> None:
        client.memories.create("User is vegetarian.")
        (self._search,) = tools(client, names=["search_memory"])

    @property
    def tool_constructor(self) -> BaseTool:
        return self._search

    @property
    def tool_invoke_params_example(self) -> Dict[str, Any]:
        return {"query": "What does the user eat?", "top_k": 3}


class TestSearchMemoryStandard(_SearchMemory, ToolsIntegrationTests):
    """LangChain's integration tests of a tool, on search_memory."""


class TestSearchMemoryStandardUnit(_SearchMemory, ToolsUnitTests):
    """LangChain's unit tests of a tool (name, input schema), on
    search_memory."""


def test_every_tool_as_the_server_declares_it(client: agentmem.Client) -> None:
    specs = client.tools.list()
    got = tools(client)
    assert [t.name for t in got] == [s["function"]["name"] for s in specs]
    # What a model is given (bind_tools converts tools so) is the server's
    # declaration, unchanged.
    assert [convert_to_openai_tool(t) for t in got] == specs


def test_invoke_remember_then_search(client: agentmem.Client) -> None:
    by_name = {t.name: t for t in tools(client)}
    stored = json.loads(by_name["remember"].invoke({"text": "User is vegetarian.", "category": "preference"}))
    assert client.memories.get(stored["id"]).text == "User is vegetarian."

    # As a model's tool call: the result is a ToolMessage answering it.
    call = {"name": "search_memory", "args": {"query": "vegetarian"}, "id": "call_7", "type": "tool_call"}
    message = by_name["search_memory"].invoke(call)
    assert isinstance(message, ToolMessage) and message.tool_call_id == "call_7"
    found = json.loads(str(message.content))["results"]
    assert [r["id"] for r in found] == [stored["id"]]


def test_a_models_mistake_goes_back_to_it(client: agentmem.Client) -> None:
    (notes,) = tools(client, names=["manage_notes"])
    call = {"name": "manage_notes", "args": {"operation": "shout"}, "id": "call_1", "type": "tool_call"}
    message = notes.invoke(call)
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert str(message.content).startswith("invalid: operation must be one of read, overwrite")


def test_agent_and_user(client: agentmem.Client, user: str) -> None:
    """Notes belong to the tools' agent; every call is the tools' user's."""
    (notes,) = tools(client, user, agent="coach", names=["manage_notes"])
    notes.invoke({"operation": "append", "content": "## Goals\n- run a 10k"})
    assert client.notes.get("coach").content == "## Goals\n- run a 10k"
    assert client.notes.get("default").content == ""

    (other_notes,) = tools(client, user + "-other", agent="coach", names=["manage_notes"])
    assert json.loads(other_notes.invoke({"operation": "read"}))["content"] == ""


def test_unknown_name(client: agentmem.Client) -> None:
    with pytest.raises(ValueError, match="no tool"):
        tools(client, names=["nope"])


async def test_atools(async_client: agentmem.AsyncClient, client: agentmem.Client) -> None:
    (remember,) = await atools(async_client, names=["remember"])
    stored = json.loads(await remember.ainvoke({"text": "User likes tea."}))
    assert client.memories.get(stored["id"]).text == "User likes tea."
    with pytest.raises(NotImplementedError):
        remember.invoke({"text": "User likes coffee."})  # no Client for sync calls
