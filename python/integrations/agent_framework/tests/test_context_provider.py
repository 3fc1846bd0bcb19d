"""AgentmemContextProvider in Agent Framework's own run loop (Agent.run,
sessions, streaming), with a stub chat client that records what the model
would be sent, against a real agentmem."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
)

import agentmem
from agentmem.agent_framework import AgentmemContextProvider


class StubClient(BaseChatClient):  # type: ignore[misc]
    """A chat client that answers reply(last user text) and keeps what it
    was sent: the messages and the instructions, per call."""

    def __init__(self, reply: Callable[[str], str] = lambda text: "Noted.") -> None:
        super().__init__()
        self.reply = reply
        self.calls: List[Tuple[List[Message], Dict[str, Any]]] = []

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any) -> Any:
        self.calls.append((list(messages), dict(options)))
        text = self.reply([m for m in messages if m.role == "user"][-1].text)
        if stream:

            async def updates() -> Any:
                for word in text.split(" "):
                    yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(word + " ")])

            return ResponseStream(updates(), finalizer=ChatResponse.from_updates)

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message("assistant", [text])])

        return response()

    def sent(self, call: int = -1) -> List[Tuple[str, str]]:
        """The messages of a call, as (role, text)."""
        return [(m.role, m.text) for m in self.calls[call][0]]

    def instructions(self, call: int = -1) -> str:
        return str(self.calls[call][1].get("instructions") or "")


async def wait_until(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_two_sessions(server: Any, user: str) -> None:
    """Seed 001's scenario through the framework: a fact told in one
    session is in the instructions of the next, the turns of a session come
    back before its input (once), every turn is recorded in order, and
    after the session ends the next one opens with the profile."""
    client = agentmem.AsyncClient(server.url)
    memory = AgentmemContextProvider(client, user=user, agent_id="advisor")
    model = StubClient(lambda text: "Noted." if "Porto" in text else f"Answer to: {text}")
    agent = Agent(client=model, instructions="You are a helpful assistant.", context_providers=[memory])

    first = agent.create_session()
    response = await agent.run("I live in Porto and I am vegetarian.", session=first)
    assert response.text == "Noted."
    await agent.run("What do you suggest for today?", session=first)
    # The second call had the first turn before its input, once.
    assert model.sent() == [
        ("user", "I live in Porto and I am vegetarian."),
        ("assistant", "Noted."),
        ("user", "What do you suggest for today?"),
    ]
    assert model.instructions().startswith("You are a helpful assistant.")
    thread_id = memory.thread_of(first)
    assert thread_id == first.session_id
    msgs = (await client.messages.list(thread_id, user)).data
    assert [(m.role, m.content) for m in msgs] == [
        ("user", "I live in Porto and I am vegetarian."),
        ("assistant", "Noted."),
        ("user", "What do you suggest for today?"),
        ("assistant", "Answer to: What do you suggest for today?"),
    ]
    thread = await client.threads.get(thread_id, user)
    assert thread.agent_id == "advisor"

    # agentmem learns the fact without a model, in the background.
    async def learned() -> Any:
        return [m.text for m in (await client.memories.list(user)).data if "vegetarian" in m.text]

    await wait_until("the memory learned", learned)

    second = agent.create_session()
    await agent.run("Where should I eat tonight?", session=second)
    assert "vegetarian" in model.instructions()
    assert model.sent() == [("user", "Where should I eat tonight?")]  # no turn of the other session
    assert memory.thread_of(second) != thread_id

    # Ending the first session: reflection, then the profile, which opens
    # every later session (the init block).
    await memory.end_session(first)

    async def profiled() -> Any:
        try:
            return "Porto" in (await client.profile.get(user)).text
        except agentmem.NotFoundError:
            return False

    await wait_until("the profile", profiled)
    third = agent.create_session()
    await agent.run("Any plans for the weekend?", session=third)
    assert "<session_initialization>" in model.instructions()
    assert "Porto" in model.instructions()
    await client.close()


async def test_streaming(server: Any, user: str) -> None:
    """A streamed run is recorded once the stream is read to its end."""
    client = agentmem.AsyncClient(server.url)
    memory = AgentmemContextProvider(client, user=user)
    agent = Agent(client=StubClient(lambda text: "One two three."), context_providers=[memory])
    session = agent.create_session()
    stream = agent.run("Count for me.", session=session, stream=True)
    words = [update.text async for update in stream]
    assert "".join(words).strip() == "One two three."
    await stream.get_final_response()
    msgs = (await client.messages.list(memory.thread_of(session), user)).data
    assert [(m.role, m.content.strip()) for m in msgs] == [("user", "Count for me."), ("assistant", "One two three.")]
    await client.close()


async def test_session_restored(server: Any, user: str) -> None:
    """A session saved (to_dict) and restored keeps its thread; a provider
    given a thread_id puts every session there."""
    client = agentmem.AsyncClient(server.url)
    memory = AgentmemContextProvider(client, user=user)
    model = StubClient()
    agent = Agent(client=model, context_providers=[memory])
    session = agent.create_session()
    await agent.run("Remember the blue door.", session=session)
    restored = AgentSession.from_dict(session.to_dict())
    await agent.run("Which door?", session=restored)
    assert model.sent()[:2] == [("user", "Remember the blue door."), ("assistant", "Noted.")]

    pinned = AgentmemContextProvider(client, user=user, thread_id="support-desk")
    agent = Agent(client=model, context_providers=[pinned])
    for text in ["Hello.", "Hello again."]:
        await agent.run(text, session=agent.create_session())
    msgs = (await client.messages.list("support-desk", user)).data
    assert [m.content for m in msgs if m.role == "user"] == ["Hello.", "Hello again."]
    await client.close()


class ToolCallingStub(FunctionInvocationLayer, StubClient):  # type: ignore[misc]
    """A model that first asks for retrieve_user_facts, then answers with
    what it returned; the framework's function invocation runs the tool."""

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any) -> Any:
        self.calls.append((list(messages), dict(options)))
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        if results:
            reply = Message("assistant", ["From memory: " + " ".join(str(c.result) for c in results)])
        else:
            call = Content.from_function_call("c1", "retrieve_user_facts", arguments={"query": "allergies?"})
            reply = Message("assistant", [call])

        async def response() -> ChatResponse:
            return ChatResponse(messages=[reply])

        return response()


async def test_facts_tool(server: Any, user: str) -> None:
    """facts_tool offers the model seed 001's retrieve_user_facts, which
    the framework runs when the model calls it: it answers from agentmem's
    facts. The turn recorded is the question and the final answer."""
    client = agentmem.AsyncClient(server.url)
    await client.memories.create("User is allergic to peanuts.", user)
    memory = AgentmemContextProvider(client, user=user, facts_tool=True)
    model = ToolCallingStub()
    agent = Agent(client=model, context_providers=[memory])
    session = agent.create_session()
    response = await agent.run("What should I avoid eating?", session=session)
    assert response.text.startswith("From memory: ") and "peanuts" in response.text
    assert [t.name for t in model.calls[0][1].get("tools") or []] == ["retrieve_user_facts"]
    msgs = (await client.messages.list(memory.thread_of(session), user)).data
    assert [(m.role, m.content) for m in msgs] == [
        ("user", "What should I avoid eating?"),
        ("assistant", response.text),
    ]
    await client.close()


def test_example(server: Any) -> None:
    """examples/agent_framework/main.py runs, and its second session's
    instructions hold what the first one told."""
    example = Path(__file__).resolve().parents[4] / "examples" / "agent_framework" / "main.py"
    env = dict(os.environ, AGENTMEM_URL=server.url)
    env.pop("AGENTMEM_API_KEY", None)
    out = subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    second = out.stdout.split("--- session 2")[1]
    assert "- User lives in Porto." in second and "- User is vegetarian." in second
