"""The errors of API calls: one class per error code of the API."""

from __future__ import annotations

import json
from typing import Dict, Optional, Type


class AgentmemError(Exception):
    """An API call that failed.

    ``code`` is the API's error code ("not_found", "conflict"…), ``status``
    the HTTP status (None when no answer came), ``message`` the server's
    message, safe to show, and ``request_id`` the server's X-Request-Id,
    which its log names. Branch on the class or on ``code``, never on the
    message.
    """

    code: str = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = status
        self.request_id = request_id

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else "no answer"
        return f"{self.message} ({self.code}, {where})"


class InvalidError(AgentmemError):
    """The request is malformed (400): the message names the field."""

    code = "invalid"


class UnauthorizedError(AgentmemError):
    """No API key, or a malformed, unknown, revoked or expired one (401)."""

    code = "unauthorized"


class ForbiddenError(AgentmemError):
    """The key is valid but this route needs another kind of key (403)."""

    code = "forbidden"


class NotFoundError(AgentmemError):
    """The thing does not exist for this user (404); so is another user's."""

    code = "not_found"


class ConflictError(AgentmemError):
    """The thing exists, or a version moved on (409)."""

    code = "conflict"


class TooLargeError(AgentmemError):
    """A size limit was exceeded (413, or 414 for a URL's query)."""

    code = "too_large"


class UnprocessableError(AgentmemError):
    """Well-formed, but it cannot be done as asked (422)."""

    code = "unprocessable"


class RateLimitedError(AgentmemError):
    """Too many requests for the key (429)."""

    code = "rate_limited"


class InternalError(AgentmemError):
    """A failure of the server (500)."""

    code = "internal"


class UnavailableError(AgentmemError):
    """The database or the model is down or busy (503): the request did
    nothing and may be sent again."""

    code = "unavailable"


class APIConnectionError(UnavailableError):
    """No answer came: the server could not be reached, or did not answer
    in time. Unlike a 503, a write that timed out may have been done: send
    it again only if it is idempotent (an append with the same key)."""


_BY_CODE: Dict[str, Type[AgentmemError]] = {
    cls.code: cls
    for cls in (
        InvalidError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        ConflictError,
        TooLargeError,
        UnprocessableError,
        RateLimitedError,
        InternalError,
        UnavailableError,
    )
}

# The code of a status, for an answer without the API's error body (from a
# proxy on the way): the inverse of the server's mapping.
_CODE_OF_STATUS = {
    400: "invalid",
    405: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    413: "too_large",
    414: "too_large",
    422: "unprocessable",
    429: "rate_limited",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


def error_from_response(status: int, reason: str, body: bytes, request_id: Optional[str]) -> AgentmemError:
    """Returns the error of a non-2xx answer: the API's
    {"error":{"code","message"}}, or for any other body a code guessed from
    the status and a message quoting the start of the body."""
    code = message = None
    try:
        err = json.loads(body)["error"]
        if isinstance(err["code"], str) and isinstance(err["message"], str) and err["code"]:
            code, message = err["code"], err["message"]
    except (ValueError, KeyError, TypeError):
        pass
    if code is None or message is None:
        code = _CODE_OF_STATUS.get(status, "internal")
        message = f"The server answered {status} {reason}".rstrip()
        text = " ".join(body.decode("utf-8", "replace").split())
        if text:
            message += ": " + (text[:200] + "…" if len(text) > 200 else text)
        message += "."
    # A code this SDK does not know (a newer server's) keeps its name and
    # takes the class of its status.
    cls = _BY_CODE.get(code) or _BY_CODE.get(_CODE_OF_STATUS.get(status, ""), AgentmemError)
    return cls(message, code=code, status=status, request_id=request_id)
