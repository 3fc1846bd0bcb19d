"""agentmem in a LangChain app: the chat history of RunnableWithMessageHistory
kept as an agentmem thread, a retriever over what agentmem learned, and
agentmem's memory tools called as a model asks.

It needs no model: LangChain's fake chat model answers. Run it against a
local server:

    go run ./cmd/agentmem serve &            # http://127.0.0.1:8080
    pip install './python[langchain]'
    python examples/langchain/chat.py        # --url, --user
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any, List, Optional, Sequence

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

import agentmem
from agentmem.langchain import AgentmemChatMessageHistory, AgentmemRetriever, tools

# LangChain deprecates RunnableWithMessageHistory (since langchain-core
# 1.3.3) for LangGraph's persistence; it still works, and is what most apps
# run.
warnings.filterwarnings("ignore", "RunnableWithMessageHistory is deprecated")


def main(argv: Optional[Sequence[str]] = None) -> None:
    flags = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    flags.add_argument("--url", default=os.environ.get("AGENTMEM_URL", "http://127.0.0.1:8080"))
    flags.add_argument("--user", default="alice")
    args = flags.parse_args(argv)
    client = agentmem.Client(args.url, user=args.user)

    # 1. The chat history: each session_id is an agentmem thread of the user.
    def history(session_id: str) -> AgentmemChatMessageHistory:
        return AgentmemChatMessageHistory(session_id, client=client, agent_id="planner")

    history("lisbon").clear()  # begin the example's conversation afresh
    seen: List[List[BaseMessage]] = []
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage("Noted: three vegetarian days in Lisbon."),
            AIMessage(
                "",
                tool_calls=[{"name": "search_memory", "args": {"query": "food"}, "id": "call_1", "type": "tool_call"}],
            ),
            AIMessage("Day 1: Alfama, lunch at a vegetarian tasca."),
        ]
    )

    def record(prompt: Any) -> Any:
        seen.append(prompt.to_messages())
        return prompt

    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a travel planner."), MessagesPlaceholder("history"), MessagesPlaceholder("input")]
    )
    chain = RunnableWithMessageHistory(
        prompt | RunnableLambda(record) | model,
        history,
        input_messages_key="input",
        history_messages_key="history",
    )
    config: Any = {"configurable": {"session_id": "lisbon"}}

    chain.invoke({"input": [HumanMessage("I'm vegetarian. Plan three days in Lisbon for me.")]}, config)
    answer = chain.invoke({"input": [HumanMessage("What should I eat on day 1?")]}, config)

    # 2. The model asked for a tool: agentmem's tools are LangChain tools.
    by_name = {t.name: t for t in tools(client, agent="planner")}
    results: List[BaseMessage] = [by_name[call["name"]].invoke(call) for call in answer.tool_calls]
    assert all(isinstance(r, ToolMessage) for r in results)
    chain.invoke({"input": results}, config)

    print("The model's last call saw:")
    for m in seen[-1]:
        print(f"  {m.type}: {_short(m.content or getattr(m, 'tool_calls', ''))}")
    print("The thread in agentmem:")
    for m in client.messages.iter("lisbon"):
        calls = ", ".join(f"{c.function.name}({c.function.arguments})" for c in m.tool_calls)
        print(f"  {m.seq} {m.role}: {_short(m.content or calls)}")

    # 3. What agentmem learned from the conversation, by search.
    retriever = AgentmemRetriever(client=client, scopes=["memories"], top_k=3)
    deadline = time.monotonic() + 30
    docs = retriever.invoke("What does the user eat?")
    while not any("vegetarian" in d.page_content for d in docs) and time.monotonic() < deadline:
        time.sleep(0.2)  # memories are learned in the background, in milliseconds
        docs = retriever.invoke("What does the user eat?")
    print("The retriever finds:")
    for d in docs:
        print(f"  [{d.metadata['kind']} {d.metadata['relevance']:.2f}] {d.page_content}")


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 100 else text[:99] + "…"


if __name__ == "__main__":
    main()
