"""AgentmemRetriever through LangChain's interfaces: LangChain's standard
retriever tests, invoke and ainvoke, Documents with agentmem's metadata,
and the retriever in a chain."""

from __future__ import annotations

from typing import Any, Dict, List, Type

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

import agentmem
from agentmem.langchain import AgentmemRetriever

from support import wait_for

FOOD = ["User is vegetarian.", "User likes spicy food.", "User is allergic to peanuts.", "User loves pastries."]


class TestAgentmemRetrieverStandard(RetrieversIntegrationTests):
    """LangChain's own tests of a retriever, over a user with four
    memories: top_k in the constructor and in invoke, invoke and ainvoke
    giving Documents."""

    @pytest.fixture(autouse=True)
    def _memories(self, client: agentmem.Client) -> None:
        for text in FOOD:
            client.memories.create(text, category="preference")
        self._client = client

    @property
    def retriever_constructor(self) -> Type[BaseRetriever]:
        return AgentmemRetriever

    @property
    def retriever_constructor_params(self) -> Dict[str, Any]:
        return {"client": self._client, "scopes": ["memories"]}

    @property
    def retriever_query_example(self) -> str:
        return "What does the user like to eat?"

    @property
    def num_results_arg_name(self) -> str:
        return "top_k"


@pytest.fixture
def trip(client: agentmem.Client) -> List[agentmem.Message]:
    """A user with a memory and a thread, "trip", whose messages search
    finds (they are indexed in the background)."""
    client.memories.create("User is vegetarian.", category="preference")
    client.threads.create(id="trip")
    stored = client.messages.append(
        "trip",
        [
            {"role": "user", "content": "Plan three days in Lisbon, with good food."},
            {"role": "assistant", "content": "Day 1: Alfama, and dinner at a tasca."},
        ],
    )
    wait_for(
        "the thread's messages to be searchable",
        lambda: client.search("Alfama tasca", scopes=["messages"]).results,
    )
    return stored


def test_documents_carry_agentmem_metadata(client: agentmem.Client, trip: List[agentmem.Message]) -> None:
    memory = client.memories.list().data[0]
    retriever = AgentmemRetriever(client=client, scopes=["memories", "messages"], top_k=10)
    docs = retriever.invoke("vegetarian food in Lisbon")
    assert all(isinstance(d, Document) for d in docs)
    by_id = {d.id: d for d in docs}

    m = by_id[memory.id]
    assert m.page_content == "User is vegetarian."
    assert m.metadata["kind"] == "memory" and m.metadata["id"] == memory.id
    assert 0 < m.metadata["score"] <= 1 and 0 <= m.metadata["relevance"] <= 1
    assert "fulltext" in m.metadata["scores"]

    msg = next(d for d in docs if d.metadata["kind"] == "message" and "Lisbon" in d.page_content)
    assert msg.metadata["thread_id"] == "trip"
    assert msg.metadata["seq_from"] == trip[0].seq and msg.id == trip[0].id
    assert msg.metadata["created_at"]


def test_invoke_arguments(client: agentmem.Client, trip: List[agentmem.Message]) -> None:
    retriever = AgentmemRetriever(client=client, scopes=["messages"])
    docs = retriever.invoke("Lisbon Alfama", top_k=1)
    assert len(docs) == 1
    assert retriever.invoke("Lisbon", filters={"thread_id": "elsewhere"}) == []
    assert retriever.invoke("Lisbon", filters={"thread_id": "trip"})
    assert [d.metadata["kind"] for d in retriever.invoke("vegetarian", scopes=["memories"])] == ["memory"]
    with pytest.raises(TypeError, match="unknown search arguments"):
        retriever.invoke("Lisbon", k=3)


async def test_ainvoke(async_client: agentmem.AsyncClient, client: agentmem.Client) -> None:
    await async_client.memories.create("User is vegetarian.")
    retriever = AgentmemRetriever(async_client=async_client, scopes=["memories"])
    docs = await retriever.ainvoke("vegetarian")
    assert [d.page_content for d in docs] == ["User is vegetarian."]
    with pytest.raises(RuntimeError, match="async_client alone"):
        retriever.invoke("vegetarian")

    # With a Client alone, ainvoke runs it in a thread, as LangChain does.
    assert [d.page_content for d in await AgentmemRetriever(client=client).ainvoke("vegetarian")] == [
        "User is vegetarian."
    ]


def test_in_a_chain(client: agentmem.Client) -> None:
    """The retriever feeds a prompt, as in LangChain's RAG chains: the
    (parrot) model sees what agentmem knows."""
    for text in FOOD:
        client.memories.create(text)
    prompt = ChatPromptTemplate.from_messages(
        [("system", "What you know of the user:\n{context}"), ("human", "{question}")]
    )

    def join(docs: List[Document]) -> str:
        return "\n".join(d.page_content for d in docs)

    seen: List[Any] = []

    def record(value: Any) -> Any:
        seen.append(value.to_messages())
        return value

    retriever = AgentmemRetriever(client=client, scopes=["memories"], top_k=2, min_score=0.2)
    chain = (
        {"context": retriever | join, "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(record)
        | ParrotFakeChatModel()
    )
    answer = chain.invoke("Which food is spicy?")
    assert answer.content == "Which food is spicy?"  # the parrot says the last message back
    system = seen[0][0].content
    assert system.startswith("What you know of the user:\n") and "User likes spicy food." in system


def test_needs_a_client() -> None:
    with pytest.raises(ValueError, match="needs client="):
        AgentmemRetriever()
