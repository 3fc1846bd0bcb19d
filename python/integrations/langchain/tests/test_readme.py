"""The README's LangChain example runs, as it is, against a real server,
with a prompt and a fake chat model for the ones it leaves to the app."""

from __future__ import annotations

import re
import subprocess
import sys

import agentmem

from support import REPO, Server

APP = """
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

prompt = ChatPromptTemplate.from_messages(
    [("system", "You are a helpful assistant."), MessagesPlaceholder("history"), ("human", "{question}")]
)
model = FakeListChatModel(responses=["Try the tasca on the corner."])
"""


def readme_block(heading: str) -> str:
    """The python block of the README's section of heading."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index(f"\n### {heading}\n") :]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, f"README.md's {heading} section has no python block"
    return m.group(1)


def test_readme_example(server: Server, user: str, client: agentmem.Client) -> None:
    code = readme_block("LangChain")
    assert 'agentmem.Client("http://127.0.0.1:8080", user="alice")' in code
    code = code.replace("http://127.0.0.1:8080", server.url).replace('"alice"', repr(user))
    out = subprocess.run([sys.executable, "-c", APP + code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert [(m.role, m.content) for m in client.messages.iter("dinner")] == [
        ("user", "I'm vegetarian. Where should I eat?"),
        ("assistant", "Try the tasca on the corner."),
    ]
