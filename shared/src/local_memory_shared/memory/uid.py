"""Record ids: ULID-style, 26 Crockford base32 characters, sortable by creation time, pasteable.

48 bits of milliseconds since the epoch then 80 random bits. Within one process ids made in the
same millisecond are strictly increasing (the random part is incremented), so sorting by id sorts
by creation order.
"""

from __future__ import annotations

import os
import re
import threading
import time

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
UID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_lock = threading.Lock()
_last: tuple[int, int] = (0, 0)


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, rem = divmod(value, 32)
        out.append(ALPHABET[rem])
    return "".join(reversed(out))


def new_uid(now_ms: int | None = None) -> str:
    """A fresh sortable id (monotonic within this process)."""
    global _last
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        last_ms, last_rand = _last
        if ms <= last_ms:
            ms, rand = last_ms, (last_rand + 1) % (1 << 80)
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last = (ms, rand)
    return _encode(ms, 10) + _encode(rand, 16)


def is_uid(text: str) -> bool:
    """True if ``text`` looks like one of our ids (case-insensitive)."""
    return bool(UID_RE.match(text.strip().upper()))


def uid_time_ms(uid: str) -> int:
    """Milliseconds since the epoch encoded in ``uid``."""
    value = 0
    for ch in uid[:10].upper():
        value = value * 32 + ALPHABET.index(ch)
    return value
