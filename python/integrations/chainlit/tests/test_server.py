"""The example app (examples/chainlit/app.py) under `chainlit run`, driven
as its page drives it: signing in, chatting over its socket, the sidebar's
thread list, opening and resuming a thread, renaming, feedback given and
taken back, deleting.
What the page gets back is what the data layer read from agentmem."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator, List, Optional, Tuple

import httpx
import pytest
import socketio
from chainlit_support import wait_until

import agentmem

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "chainlit" / "app.py"


@pytest.fixture(scope="module")
def app(server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`chainlit run` of the example on the agentmem server; its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = tmp_path_factory.mktemp("chainlit-app")
    env = dict(
        os.environ,
        AGENTMEM_URL=server.url,
        CHAINLIT_AUTH_SECRET="test-secret-" + "x" * 52,
        CHAINLIT_APP_ROOT=str(root),
    )
    env.pop("AGENTMEM_API_KEY", None)
    log = open(root / "chainlit.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chainlit",
            "run",
            str(EXAMPLE),
            "--headless",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/auth/config", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("chainlit run did not start:\n" + (root / "chainlit.log").read_text())
        time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


class Page:
    """The browser: signed in over HTTP, a session over the socket."""

    def __init__(self, url: str, http: httpx.AsyncClient, token: str) -> None:
        self.url = url
        self.http = http
        self.token = token
        self.events: List[Tuple[str, Any]] = []
        self.sio = socketio.AsyncClient()
        self.sio.on("*", self._event)

    async def _event(self, event: str, data: Any = None) -> None:
        self.events.append((event, data))

    async def open(self, thread_id: Optional[str] = None) -> None:
        """Connects as the page does on load (resuming thread_id)."""
        auth = {
            "clientType": "webapp",
            "sessionId": str(uuid.uuid4()),
            "threadId": thread_id,
            "userEnv": "{}",
            "chatProfile": None,
        }
        await self.sio.connect(
            self.url,
            headers={"Cookie": f"access_token={self.token}"},
            auth=auth,
            socketio_path="/ws/socket.io",
            transports=["websocket"],
        )
        await self.sio.emit("connection_successful")

    async def say(self, text: str) -> None:
        step = {
            "id": str(uuid.uuid4()),
            "threadId": "",
            "type": "user_message",
            "name": "User",
            "output": text,
            "createdAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        }
        await self.sio.emit("client_message", {"message": step, "fileReferences": None})

    async def event(self, name: str, match: Any = lambda d: True) -> Any:
        """The first event name whose data matches, waiting for it."""

        async def found() -> Any:
            return next((d for e, d in self.events if e == name and match(d)), None)

        return await wait_until(f"event {name}", found)

    async def close(self) -> None:
        await self.sio.disconnect()


async def sign_in(url: str, user: str) -> Tuple[httpx.AsyncClient, str]:
    http = httpx.AsyncClient(base_url=url, timeout=30)
    r = await http.post("/login", data={"username": user, "password": "demo"})
    assert r.status_code == 200, r.text
    return http, r.cookies["access_token"]


async def test_chat_list_resume(app: str, server: Any, user: str) -> None:
    http, token = await sign_in(app, user)
    am = agentmem.AsyncClient(server.url)
    try:
        # A first conversation, over the socket.
        page = Page(app, http, token)
        await page.open()
        await page.say("I live in Porto and I am vegetarian.")
        first = await page.event("first_interaction")
        thread_id = first["thread_id"]
        reply = await page.event("new_message", lambda d: d["output"].startswith("You said:"))
        assert reply["output"].startswith("You said: I live in Porto and I am vegetarian.")
        await page.close()

        # The sidebar lists it, named after the first message.
        async def listed() -> Any:
            r = await http.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
            assert r.status_code == 200, r.text
            return r.json()["data"]

        threads = await wait_until("the thread listed", listed)
        assert [(t["id"], t["name"], t["userIdentifier"]) for t in threads] == [
            (thread_id, "I live in Porto and I am vegetarian.", user)
        ]

        # Opening it: the page gets its steps as Chainlit wrote them.
        async def opened() -> Any:
            r = await http.get(f"/project/thread/{thread_id}")
            assert r.status_code == 200, r.text
            thread = r.json()
            messages = [s for s in thread["steps"] if s["type"].endswith("_message")]
            return thread if len(messages) == 2 else None

        thread = await wait_until("the thread's two messages", opened)
        assert [(s["type"], s["output"][:20]) for s in thread["steps"]] == [
            ("user_message", "I live in Porto and "),
            ("run", ""),
            ("assistant_message", "You said: I live in "),
        ]
        assert thread["steps"][1]["name"] == "on_message"

        # agentmem learns from it (no model needed), and a new conversation
        # draws on it: the reply's Context element says so.
        async def learned() -> Any:
            page = await am.memories.list(user)
            return [m.text for m in page.data if "vegetarian" in m.text]

        await wait_until("the memory learned", learned)
        page = Page(app, http, token)
        await page.open()
        await page.say("Where should I eat tonight?")
        second = (await page.event("first_interaction"))["thread_id"]
        await page.event("new_message", lambda d: d["output"].startswith("You said: Where"))
        await page.close()

        async def context_element() -> Any:
            r = await http.get(f"/project/thread/{second}")
            return [e for e in r.json()["elements"] or [] if e["name"] == "Context"]

        [element] = await wait_until("the Context element", context_element)
        assert "vegetarian" in base64.b64decode(element["url"].partition(",")[2]).decode()

        # Resuming the first: Chainlit sends the page the thread to show.
        page = Page(app, http, token)
        await page.open(thread_id)
        resumed = await page.event("resume_thread")
        assert resumed["id"] == thread_id
        assert [s["output"][:20] for s in resumed["steps"] if s["type"].endswith("_message")] == [
            "I live in Porto and ",
            "You said: I live in ",
        ]
        await page.close()

        # Rename, feedback on the answer, then delete.
        r = await http.put("/project/thread", json={"threadId": thread_id, "name": "Porto"})
        assert r.status_code == 200, r.text
        answer = thread["steps"][2]
        feedback = {"forId": answer["id"], "threadId": thread_id, "value": 1, "comment": "good"}
        r = await http.put("/feedback", json={"feedback": feedback, "sessionId": str(uuid.uuid4())})
        assert r.status_code == 200, r.text
        r = await http.get(f"/project/thread/{thread_id}")
        got = r.json()
        assert got["name"] == "Porto"
        fid = f"{thread_id}/{answer['id']}"
        assert got["steps"][2]["feedback"] == {"forId": answer["id"], "id": fid, "value": 1, "comment": "good"}
        r = await http.request("DELETE", "/feedback", json={"feedbackId": fid})
        assert r.status_code == 200, r.text
        r = await http.get(f"/project/thread/{thread_id}")
        assert r.json()["steps"][2].get("feedback") is None
        r = await http.request("DELETE", "/project/thread", json={"threadId": thread_id})
        assert r.status_code == 200, r.text
        assert [t["id"] for t in await listed()] == [second]
        r = await http.get(f"/project/thread/{thread_id}")
        assert r.json() is None

        # Another user can neither open nor list it.
        other, other_token = await sign_in(app, user + "-other")
        r = await other.get(f"/project/thread/{second}")
        assert r.status_code == 401
        r = await other.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
        assert r.json()["data"] == []
        await other.aclose()
    finally:
        await http.aclose()
        await am.close()
