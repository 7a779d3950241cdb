"""What the HTTP embedding backends share: transport error types and retryable statuses.

:class:`RetryPolicy` and :class:`BackendHealth` live in :mod:`.base` (the ONNX backend and the
query encoder need them without httpx) and are re-exported here.
"""

from __future__ import annotations

import httpx

from .base import BackendHealth, RetryPolicy

__all__ = [
    "PROBE_ERRORS",
    "RETRYABLE_STATUSES",
    "TRANSPORT_ERRORS",
    "BackendHealth",
    "RetryPolicy",
    "is_retryable_status",
]


def _transport_error_types() -> tuple[type[BaseException], ...]:
    # google-genai sends through httpx2 (a fork with its own exception classes) when it is
    # installed, so connection resets and timeouts arrive as either family.
    types: list[type[BaseException]] = [httpx.TransportError, ConnectionError]
    try:
        import httpx2
    except ImportError:
        pass
    else:
        types.append(httpx2.TransportError)
    return tuple(types)


#: Connection refused/reset, timeouts, broken responses: always worth another attempt.
TRANSPORT_ERRORS = _transport_error_types()

#: What a health probe treats as "down": transport failures and unparseable answers.
PROBE_ERRORS: tuple[type[BaseException], ...] = (*TRANSPORT_ERRORS, ValueError, TypeError)

#: HTTP statuses that mean "try again later" rather than "your request is wrong".
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def is_retryable_status(status: int | None) -> bool:
    """True for 408/429/5xx, the statuses a later attempt may cure."""
    return status is not None and (status in RETRYABLE_STATUSES or 500 <= status < 600)
