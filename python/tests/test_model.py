"""The SDK's own parts, without a server: records from and to JSON, times,
paths, and the generated synchronous client."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import agentmem
from agentmem import _base

PYTHON = Path(__file__).resolve().parents[1]


def test_records_read_and_write_the_api_json() -> None:
    data = {
        "id": "m1",
        "user_id": "alice",
        "kind": "fact",
        "text": "User is vegetarian.",
        "confidence": 1,
        "sources": [{"thread_id": "t1", "seq_from": 3, "seq_to": 3}],
        "metadata": {"a": [1, 2]},
        "version": 1,
        "valid_from": "2026-11-30T03:33:59.040443123Z",
        "created_at": "2026-11-30T03:33:59.074015Z",
        "updated_at": "2026-11-30T03:33:59.074015Z",
        "history": [
            {
                "memory_id": "m1",
                "version": 1,
                "op": "add",
                "text": "User is vegetarian.",
                "category": "",
                "confidence": 1.0,
                "importance": 0.5,
                "at": "2026-11-30T03:33:59Z",
            }
        ],
        "a_field_of_a_newer_server": {"x": 1},
    }
    m = agentmem.MemoryExport.from_dict(data)
    assert isinstance(m.sources[0], agentmem.ThreadRange) and m.sources[0].seq_from == 3
    assert isinstance(m.history[0], agentmem.MemoryChange) and m.history[0].op == "add"
    assert m.confidence == 1.0 and isinstance(m.confidence, float)
    assert m.invalid_at is None and m.agent_id == ""
    # Written back as read: what the server left out stays out, and what
    # this SDK does not know is kept, so that an export imports whole.
    assert m.to_dict() == {**data, "confidence": 1.0, "category": "", "importance": 0.0, "source": ""}


def test_null_lists_read_as_empty() -> None:
    t = agentmem.Thread.from_dict({"id": "t", "tags": None, "metadata": None})
    assert (t.tags, t.metadata) == ([], {})


def test_keyword_field_names() -> None:
    r = agentmem.SeqRange.from_dict({"from": 1, "to": 4})
    assert (r.from_, r.to) == (1, 4) and r.to_dict() == {"from": 1, "to": 4}


def test_records_made_here_leave_out_empty_times() -> None:
    assert agentmem.Session(user_id="alice", agent_id="a", thread_id="t").to_dict() == {
        "user_id": "alice",
        "agent_id": "a",
        "thread_id": "t",
    }


def test_page() -> None:
    page = agentmem.Page([1, 2], "next")
    assert list(page) == [1, 2] and len(page) == 2 and page.next_cursor == "next"


def test_times() -> None:
    t = agentmem.parse_time("2026-11-30T03:33:59.040443123Z")
    assert t == datetime(2026, 11, 30, 3, 33, 59, 40443, tzinfo=timezone.utc)
    assert agentmem.parse_time("2026-11-30T05:33:59+02:00") == datetime(2026, 11, 30, 3, 33, 59, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        agentmem.parse_time("yesterday")
    plus2 = timezone(timedelta(hours=2))
    assert _base.format_time(datetime(2026, 1, 2, 5, 4, 5, tzinfo=plus2)) == "2026-01-02T03:04:05Z"
    assert _base.query(since=datetime(2026, 1, 2, tzinfo=timezone.utc), tag=["a", "b"], deleted=True, limit=None) == [
        ("since", "2026-01-02T00:00:00Z"),
        ("tag", "a"),
        ("tag", "b"),
        ("deleted", "true"),
    ]


def test_paths() -> None:
    assert (
        _base.path("v1", "users", "tenant:acme/user:alice", "threads") == "/v1/users/tenant:acme%2Fuser:alice/threads"
    )
    assert _base.path("v1", "users", "a b", "threads", "ü?#") == "/v1/users/a%20b/threads/%C3%BC%3F%23"
    assert _base.path("v1", "users", "..", "threads", ".") == "/v1/users/%2E%2E/threads/%2E"
    with pytest.raises(ValueError):
        _base.path("v1", "users", "", "threads")


def test_retry_after() -> None:
    assert _base.retry_after("1") == 1.0
    assert _base.retry_after(None) is None and _base.retry_after("soon") is None
    assert 0 <= (_base.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") or 0) < 1  # a date past is now


def test_sync_client_is_generated_from_the_async_one() -> None:
    sys.path.insert(0, str(PYTHON / "scripts"))
    try:
        import unasync
    finally:
        sys.path.pop(0)
    assert unasync.main(["--check"]) == 0, "src/agentmem/_client.py is stale: run python scripts/unasync.py"
