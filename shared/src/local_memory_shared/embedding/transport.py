"""What the HTTP embedding backends share: bounded retries with backoff, and health reports."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
import tenacity

logger = logging.getLogger(__name__)

T = TypeVar("T")


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


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff: ``attempts`` tries, sleeping base, 2*base, 4*base… (capped)."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must not be negative")

    def call(self, fn: Callable[[], T], *, retry_if: Callable[[BaseException], bool], what: str) -> T:
        """Run ``fn``, retrying while ``retry_if(exc)`` holds; the last exception propagates."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            # No jitter: one indexer talks to one server, and deterministic gaps keep tests exact.
            wait=tenacity.wait_exponential(
                multiplier=self.base_delay, min=self.base_delay, max=self.max_delay
            ),
            retry=tenacity.retry_if_exception(retry_if),
            before_sleep=_log_retry(what),
            reraise=True,
        )
        return retrying(fn)


def _log_retry(what: str) -> Callable[[tenacity.RetryCallState], None]:
    def before_sleep(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        logger.warning(
            "%s failed (attempt %d): %s; retrying in %.2fs", what, state.attempt_number, exc, delay
        )

    return before_sleep


@dataclass(frozen=True)
class BackendHealth:
    """Outcome of an embedder's cheap readiness probe (for health_check / doctor)."""

    ok: bool
    backend: str
    model: str
    detail: str
    latency_ms: float | None = None
