"""Retries, through both clients: which calls are sent again, after what
answers and how long; and an append whose answer is lost on the way,
retried against a real server, which stores it once."""

from __future__ import annotations

from typing import Any, Callable, List

import httpx
import pytest

import agentmem

Handler = Callable[[httpx.Request], httpx.Response]


def unavailable(retry_after: str = "0") -> httpx.Response:
    return httpx.Response(
        503,
        headers={"Retry-After": retry_after},
        json={"error": {"code": "unavailable", "message": "The database is busy."}},
    )


def ok_thread(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": "t", "user_id": "alice", "status": "active"})


def script(answers: List[Handler], seen: List[httpx.Request]) -> httpx.MockTransport:
    """A transport answering each request with the next of answers (the
    last one again once they run out), recording the requests in seen."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1](request)

    return httpx.MockTransport(handle)


def test_get_retried_after_503(client_factory: Any) -> None:
    seen: List[httpx.Request] = []
    c = client_factory(
        "http://agentmem.test",
        user="alice",
        transport=script([lambda r: unavailable(), lambda r: unavailable(), ok_thread], seen),
    )
    assert c.threads.get("t").id == "t"
    assert len(seen) == 3


def test_retries_give_up(client_factory: Any) -> None:
    seen: List[httpx.Request] = []
    c = client_factory("http://agentmem.test", user="alice", transport=script([lambda r: unavailable()], seen))
    with pytest.raises(agentmem.UnavailableError) as e:
        c.threads.get("t")
    assert (e.value.code, e.value.status, e.value.message) == ("unavailable", 503, "The database is busy.")
    assert len(seen) == 1 + 3  # max_retries


@pytest.mark.parametrize(
    "name, call, attempts",
    [
        ("create, a POST, is sent once", lambda c: c.threads.create(id="t"), 1),
        ("a PATCH is sent once", lambda c: c.threads.update("t", title="x"), 1),
        ("facts, a paid model call, is sent once", lambda c: c.facts("x"), 1),
        ("a notes write is sent once", lambda c: c.notes.edit("a", "append", content="x"), 1),
        ("a notes read is retried", lambda c: c.notes.edit("a", "read"), 2),
        ("end is retried", lambda c: c.threads.end("t"), 2),
        ("search is retried", lambda c: c.search("x"), 2),
        (
            "an append, with its key, is retried",
            lambda c: c.messages.append("t", [{"role": "user", "content": "x"}]),
            2,
        ),
        ("a DELETE is retried", lambda c: c.memories.delete("m"), 2),
        ("a PUT is retried", lambda c: c.sessions.set("a", "t"), 2),
    ],
)
def test_which_calls_are_retried(client_factory: Any, name: str, call: Callable[[Any], Any], attempts: int) -> None:
    seen: List[httpx.Request] = []
    c = client_factory(
        "http://agentmem.test", user="alice", transport=script([lambda r: unavailable()], seen), max_retries=1
    )
    with pytest.raises(agentmem.UnavailableError):
        call(c)
    assert len(seen) == attempts, name


def test_long_retry_after_is_not_waited_for(client_factory: Any) -> None:
    seen: List[httpx.Request] = []
    c = client_factory(
        "http://agentmem.test", user="alice", transport=script([lambda r: unavailable("60"), ok_thread], seen)
    )
    with pytest.raises(agentmem.UnavailableError):
        c.threads.get("t")
    assert len(seen) == 1


def test_no_retries(client_factory: Any) -> None:
    seen: List[httpx.Request] = []
    c = client_factory(
        "http://agentmem.test",
        user="alice",
        transport=script([lambda r: unavailable(), ok_thread], seen),
        max_retries=0,
    )
    with pytest.raises(agentmem.UnavailableError):
        c.threads.get("t")
    assert len(seen) == 1


def test_unreachable(client_factory: Any) -> None:
    seen: List[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    c = client_factory("http://agentmem.test", user="alice", transport=script([refuse, refuse, ok_thread], seen))
    assert c.threads.get("t").id == "t"  # retried, with a back-off
    seen.clear()
    c = client_factory("http://agentmem.test", user="alice", transport=script([refuse], seen), max_retries=1)
    with pytest.raises(agentmem.APIConnectionError) as e:
        c.threads.get("t")
    assert isinstance(e.value, agentmem.UnavailableError)
    assert (e.value.code, e.value.status) == ("unavailable", None)
    assert "connection refused" in e.value.message and len(seen) == 2


def test_error_without_the_api_body(client_factory: Any) -> None:
    c = client_factory(
        "http://agentmem.test",
        user="alice",
        transport=httpx.MockTransport(lambda r: httpx.Response(502, text="<html>Bad Gateway</html>")),
        max_retries=0,
    )
    with pytest.raises(agentmem.UnavailableError) as e:
        c.threads.get("t")
    assert (e.value.code, e.value.status) == ("unavailable", 502)
    assert e.value.message == "The server answered 502 Bad Gateway: <html>Bad Gateway</html>."


class LoseFirstAppendAnswer(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Forwards requests to the real server, but answers the first append
    with a 503 in place of the server's answer, as if that answer had been
    lost on the way after the server stored the messages."""

    def __init__(self) -> None:
        self.sync, self.async_ = httpx.HTTPTransport(), httpx.AsyncHTTPTransport()
        self.appends: List[str] = []

    def _lost(self, request: httpx.Request) -> bool:
        if request.method == "POST" and request.url.path.endswith("/messages"):
            self.appends.append(request.headers["Idempotency-Key"])
            return len(self.appends) == 1
        return False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.sync.handle_request(request)
        if self._lost(request):
            response.read()
            return unavailable()
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.async_.handle_async_request(request)
        if self._lost(request):
            await response.aread()
            return unavailable()
        return response

    def close(self) -> None:
        self.sync.close()

    async def aclose(self) -> None:
        await self.async_.aclose()


def test_lost_append_answer_is_retried_and_stored_once(make_client: Any) -> None:
    transport = LoseFirstAppendAnswer()
    c = make_client(transport=transport)
    c.threads.create(id="t")
    stored = c.messages.append(
        "t", [{"role": "user", "content": "I live in Porto."}, {"role": "assistant", "content": "Noted."}]
    )
    assert len(transport.appends) == 2 and transport.appends[0] == transport.appends[1]  # sent again, with its key
    assert [m.seq for m in stored] == [1, 2]
    assert [m.id for m in c.messages.list("t")] == [m.id for m in stored]
    assert c.threads.get("t").message_count == 2
