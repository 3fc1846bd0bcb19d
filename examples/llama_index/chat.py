"""agentmem in a LlamaIndex app: seed 002's ChatMemoryBuffer with agentmem as
its chat store, then, in a new conversation, agentmem's own memory, whose
context holds what the user said in the first.

It needs no model: LlamaIndex's MockLLM answers (and remembers what it was
sent). Run it against a local server:

    go run ./cmd/agentmem serve &            # http://127.0.0.1:8080
    pip install './python[llama-index]'
    python examples/llama_index/chat.py      # --url, --user
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Optional, Sequence

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import ChatMemoryBuffer, Memory

import agentmem
from agentmem.llama_index import AgentmemChatStore, AgentmemMemory, AgentmemMemoryBlock


def main(argv: Optional[Sequence[str]] = None) -> None:
    flags = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    flags.add_argument("--url", default=os.environ.get("AGENTMEM_URL", "http://127.0.0.1:8080"))
    flags.add_argument("--user", default="alice")
    args = flags.parse_args(argv)
    client = agentmem.Client(args.url, user=args.user)
    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=4)

    # 1. Seed 002: a ChatMemoryBuffer per session, its store agentmem.
    store = AgentmemChatStore(client=client, agent_id="docmind")
    store.delete_messages("report-chat")  # begin the example's conversation afresh
    memory = ChatMemoryBuffer.from_defaults(token_limit=3000, chat_store=store, chat_store_key="report-chat")
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat("I'm vegetarian, and I'm reading the quarterly report.")
    engine.chat("What does it say about costs?")
    print("Session report-chat in agentmem:")
    for m in store.get_messages("report-chat"):
        print(f"  {m.role.value}: {m.content}")

    # agentmem learns from the turns in the background (milliseconds).
    deadline = time.monotonic() + 30
    while "User is vegetarian." not in [m.text for m in client.memories.iter()] and time.monotonic() < deadline:
        time.sleep(0.2)

    # 2. A new conversation with agentmem's memory: its context holds the
    # relevant memories of every thread, and the newest turns that fit.
    store.delete_messages("dinner")
    memory2 = AgentmemMemory.from_defaults(client=client, chat_store_key="dinner", token_limit=2000, llm=llm)
    SimpleChatEngine.from_defaults(llm=llm, memory=memory2).chat("Where should I eat tonight?")
    print("In a new session, the model was sent:")
    for m in llm.last_chat_messages or []:
        print(f"  {m.role.value}: {m.content}")

    # 3. Or LlamaIndex's Memory, with agentmem's memories as a block.
    memory3 = Memory.from_defaults(
        session_id="lunch", token_limit=2000, memory_blocks=[AgentmemMemoryBlock(client=client)]
    )
    SimpleChatEngine.from_defaults(llm=llm, memory=memory3).chat("Any ideas for lunch?")
    print("With Memory and AgentmemMemoryBlock, the model was sent:")
    for m in llm.last_chat_messages or []:
        print(f"  {m.role.value}: {m.content}")


if __name__ == "__main__":
    main()
