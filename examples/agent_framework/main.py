"""Seed 001's memory through Microsoft Agent Framework: an agent whose
context provider is agentmem, over two sessions of one user.

    pip install './python[agent-framework]'
    go run ./cmd/agentmem serve          # agentmem on 127.0.0.1:8080
    python examples/agent_framework/main.py

No model is needed: the chat client here is a stand-in that shows what a
model would be given (with one, use agent_framework.openai's
OpenAIChatClient and the same provider). In the first session the user
says where they live and what they eat, and the session ends; agentmem
learns the facts and the profile in the background. The second session's
instructions then hold them. AGENTMEM_URL and AGENTMEM_API_KEY say where
agentmem is.
"""

import asyncio
import os
import uuid
from typing import Any, Sequence

from agent_framework import Agent, BaseChatClient, ChatResponse, Message

import agentmem
from agentmem.agent_framework import AgentmemContextProvider


class ShowContext(BaseChatClient):
    """A stand-in for a model: it prints what it is given and answers
    "Noted."."""

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any) -> Any:
        print("  the model is given these instructions:")
        print("    " + str(options.get("instructions") or "").replace("\n", "\n    "))
        print("  and these messages:")
        for m in messages:
            print(f"    {m.role}: {m.text}")

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message("assistant", ["Noted."])])

        return response()


async def main() -> None:
    client = agentmem.AsyncClient(
        os.environ.get("AGENTMEM_URL", "http://127.0.0.1:8080"), api_key=os.environ.get("AGENTMEM_API_KEY")
    )
    user = "af-demo-" + uuid.uuid4().hex[:6]  # a new user each run
    memory = AgentmemContextProvider(client, user=user, agent_id="advisor")
    agent = Agent(client=ShowContext(), instructions="You are a financial advisor.", context_providers=[memory])

    first = agent.create_session()
    for text in ["I live in Porto and I am vegetarian.", "I want to retire at 60."]:
        print(f"--- session 1, {user}: {text}")
        await agent.run(text, session=first)
    await memory.end_session(first)  # reflection and the profile follow in the background

    print("--- waiting for agentmem to learn from session 1")
    for _ in range(300):
        try:
            if "Porto" in (await client.profile.get(user)).text:
                break
        except agentmem.NotFoundError:
            pass
        await asyncio.sleep(0.1)

    second = agent.create_session()
    text = "Where should I eat tonight?"
    print(f"--- session 2, {user}: {text}")
    await agent.run(text, session=second)
    await client.close()


if __name__ == "__main__":
    asyncio.run(main())
