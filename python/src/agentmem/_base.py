"""What the sync and async clients share: a call as data (method, path,
query, body, how to read the answer), and the retry policy."""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Tuple, Type, TypeVar

import httpx

from ._errors import AgentmemError, error_from_response
from ._model import Model
from ._types import Page

T = TypeVar("T")
M = TypeVar("M", bound=Model)

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it here)

USER_AGENT = f"agentmem-python/{__version__}"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
# The back-off before the first retry, doubling with each up to
# RETRY_MAX_DELAY; a Retry-After longer than RETRY_MAX_DELAY is not waited
# for: the caller gets the error at once.
RETRY_BASE_DELAY = 0.25
RETRY_MAX_DELAY = 10.0
# Answers after which an idempotent call is sent again: the server refused
# it before doing anything (429), or it, or something on the way, is
# unavailable for now.
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})

Query = List[Tuple[str, str]]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call: what to send, and how to read a 2xx answer.

    GET, PUT and DELETE calls are retried, unless ``idempotent`` is False;
    a POST only when ``idempotent`` is True (it changes nothing twice:
    ending a thread, a search, an append with its Idempotency-Key). Other
    POSTs and PATCHes are sent once: a retry could store twice what the
    first attempt stored before its answer was lost.
    """

    method: str
    path: str  # escaped, from the server's root
    read: Callable[[httpx.Response], T]
    query: Query = field(default_factory=list)
    body: Optional[bytes] = None  # JSON
    headers: Mapping[str, str] = field(default_factory=dict)
    idempotent: Optional[bool] = None  # None: by the method
    accept: str = "application/json"

    @property
    def retryable(self) -> bool:
        if self.idempotent is not None:
            return self.idempotent
        return self.method in ("GET", "PUT", "DELETE")

    def with_cursor(self, cursor: str) -> "Call[T]":
        """Returns the call with its query's cursor set to cursor."""
        return replace(self, query=[(k, v) for k, v in self.query if k != "cursor"] + [("cursor", cursor)])


def path(*segments: str) -> str:
    """Joins path segments, each escaped ("/" too: a tenant's user
    "tenant:acme/user:alice" is one segment). An empty one is refused, and
    "." and ".." are escaped: either would make another route's path."""
    out = []
    for s in segments:
        if not isinstance(s, str) or s == "":
            raise ValueError(f"an ID in the request path is empty or not a string: {s!r}")
        if s in (".", ".."):
            out.append(s.replace(".", "%2E"))
        else:
            out.append(_quote(s))
    return "/" + "/".join(out)


def _quote(s: str) -> str:
    # As Go's url.PathEscape: unreserved characters and sub-delimiters stay.
    return re.sub(
        r"[^A-Za-z0-9\-._~!$&'()*+,;=:@]",
        lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")),
        s,
    )


def query(**params: Any) -> Query:
    """Returns the query of the parameters that are not None: booleans as
    true/false, times in RFC 3339, a list as the parameter repeated."""
    out: Query = []
    for name, value in params.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            out.append((name, _query_value(v)))
    return out


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return format_time(v)
    return str(v)


def body(**fields: Any) -> bytes:
    """Returns the JSON body of the fields that are not None (the server
    reads an absent field as a null one)."""
    return encode({k: v for k, v in fields.items() if v is not None})


def encode(value: Any) -> bytes:
    """Returns value as JSON: records by their to_dict, times in RFC 3339."""
    return json.dumps(_jsonable(value), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _jsonable(v: Any) -> Any:
    if isinstance(v, Model):
        return v.to_dict()
    if isinstance(v, datetime):
        return format_time(v)
    if isinstance(v, Mapping):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def format_time(t: datetime) -> str:
    """Returns t in RFC 3339, in UTC; a naive datetime is taken as local
    time, as datetime.astimezone takes it."""
    s = t.astimezone(timezone.utc).isoformat()
    return s[: -len("+00:00")] + "Z" if s.endswith("+00:00") else s


_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def parse_time(s: str) -> datetime:
    """Returns the datetime of an RFC 3339 time as the API sends it
    (fractions past microseconds dropped; "Z" as UTC)."""
    m = _TIME.match(s)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {s!r}")
    frac = (m.group(2) or "")[:6].ljust(6, "0")
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    return datetime.fromisoformat(f"{m.group(1)}.{frac}{zone}")


# How to read answers.


def json_of(response: httpx.Response) -> Any:
    return json.loads(response.content)


def model(cls: Type[M]) -> Callable[[httpx.Response], M]:
    """Reads the answer as a record of cls."""
    return lambda r: cls.from_dict(json_of(r))


def page(cls: Type[M]) -> Callable[[httpx.Response], Page[M]]:
    """Reads the answer as a page of records of cls."""

    def read(r: httpx.Response) -> Page[M]:
        d = json_of(r)
        return Page([cls.from_dict(x) for x in d.get("data") or []], d.get("next_cursor") or "")

    return read


def models_in(key: str, cls: Type[M]) -> Callable[[httpx.Response], List[M]]:
    """Reads the answer's list under key as records of cls."""
    return lambda r: [cls.from_dict(x) for x in json_of(r).get(key) or []]


def model_in(key: str, cls: Type[M]) -> Callable[[httpx.Response], M]:
    """Reads the answer's object under key as a record of cls."""
    return lambda r: cls.from_dict(json_of(r).get(key) or {})


def nothing(r: httpx.Response) -> None:
    return None


def text(r: httpx.Response) -> str:
    return r.text


# Sending.


def headers(call: Call[Any], api_key: Optional[str], extra: Mapping[str, str]) -> Dict[str, str]:
    h = {"Accept": call.accept, "User-Agent": USER_AGENT, **extra, **call.headers}
    if call.body is not None:
        h["Content-Type"] = "application/json"
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


def result(call: Call[T], response: httpx.Response) -> T:
    """Returns what the answer to call holds, or raises its error."""
    if not 200 <= response.status_code <= 299:
        raise error_from_response(
            response.status_code, response.reason_phrase, response.content, response.headers.get("X-Request-Id")
        )
    return call.read(response)


def retry_delay(response: Optional[httpx.Response], attempt: int) -> Optional[float]:
    """Returns the seconds to wait before sending a call again after
    attempt (0 for the first) got response (None: no answer), or None when
    it should not be sent again: the answer is not one to retry, or asks
    for a longer wait than RETRY_MAX_DELAY."""
    if response is not None:
        if response.status_code not in RETRYABLE_STATUSES:
            return None
        after = retry_after(response.headers.get("Retry-After"))
        if after is not None:
            return after if after <= RETRY_MAX_DELAY else None
    d = min(RETRY_BASE_DELAY * 2.0**attempt, RETRY_MAX_DELAY)
    return d / 2 + random.uniform(0, d / 2)  # jitter spreads out clients that failed together


def retry_after(value: Optional[str]) -> Optional[float]:
    """Returns the seconds a Retry-After header asks for: a number of
    seconds or an HTTP date."""
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def default_user(user: Optional[str], fallback: Optional[str]) -> str:
    u = user if user is not None else fallback
    if u is None:
        raise ValueError("no user: pass user=…, or create the client with Client(url, user=…)")
    return u


def same_cursor_error() -> AgentmemError:
    return AgentmemError("The server answered the same next cursor again; stopping rather than looping.")


def idempotency_key(key: Optional[str]) -> str:
    """Returns key, or a new random one."""
    return key if key is not None else str(uuid.uuid4())
