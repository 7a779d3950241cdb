"""Memory routes of the monitor: seed 000's ``/api/records`` and ``/api/records/search``, and one record.

All three are read-only with respect to hit counters (seed 000): searches go through
``memory_search`` without ``hitIds`` (a bare search never counts), and a record is read with
:func:`local_memory_search.memory.tools.read_record`, which counts nothing — unlike the
``get_memory`` tool an agent calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.memory.model import KINDS

from .params import flag as _flag

#: Seed 000: the listing hides these unless ``includeEphemeral``.
EPHEMERAL_KINDS = ("prompt", "session", "log", "scratch")
LISTING_SORTS = ("hits", "occurrences", "updated")
SEARCH_SORTS = ("relevance", "updated", "occurrences", "hits")
MAX_LIMIT = 1000


def _limit(params: Mapping[str, str], default: int) -> int:
    raw = params.get("limit") or ""
    try:
        value = int(raw) if raw else default
    except ValueError as exc:
        raise InvalidArgument("limit must be an integer", field="limit") from exc
    if not 1 <= value <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return value


def _choice(
    params: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str | None
) -> str | None:
    value = (params.get(name) or "").strip() or default
    if value is not None and value not in allowed:
        raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}", field=name)
    return value


def _scope(params: Mapping[str, str]) -> dict[str, Any]:
    """Which project: the selected code project (resolved like the agent's cwd) or all of them."""
    if _flag(params, "crossProject"):
        return {"crossProject": True}
    project = (params.get("project") or "").strip()
    return {"cwd": project} if project else {}


def _search(args: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ..tools import call_tool

    return call_tool("memory_search", args, settings=settings)


def list_records(params: Mapping[str, str], settings: Settings) -> tuple[int, dict[str, Any]]:
    """``GET /api/records``: the Memory listing (ephemeral kinds and expired records hidden by default)."""
    kind = _choice(params, "kind", KINDS, None)
    if kind:
        kinds = [kind]
    elif _flag(params, "includeEphemeral"):
        kinds = list(KINDS)
    else:
        kinds = [k for k in KINDS if k not in EPHEMERAL_KINDS]
    args: dict[str, Any] = {
        **_scope(params),
        "kinds": kinds,
        "sort": _choice(params, "sort", LISTING_SORTS, "hits"),
        "limit": _limit(params, 200),
        "includeExpired": _flag(params, "includeExpired"),
        "includeScratch": "scratch" in kinds,
    }
    envelope = _search(args, settings)
    if not envelope.get("ok"):
        return _status(envelope), envelope
    records = envelope.get("results") or []
    if _flag(params, "untagged"):
        records = [r for r in records if not r.get("tags")]
    return 200, {"ok": True, "records": records, "warnings": envelope.get("warnings", [])}


def search_records(params: Mapping[str, str], settings: Settings) -> tuple[int, dict[str, Any]]:
    """``GET /api/records/search``: seed 000's parameters; answers ``{hits}``."""
    args: dict[str, Any] = {
        **_scope(params),
        "sort": _choice(params, "sort", SEARCH_SORTS, "relevance"),
        "limit": _limit(params, 50),
        "explain": _flag(params, "explain"),
        "includeExpired": _flag(params, "includeExpired"),
    }
    query = (params.get("q") or "").strip()
    if query:
        args["query"] = query
    kind = _choice(params, "kind", KINDS, None)
    if kind:
        args["kinds"] = [kind]
    if params.get("asOf"):
        args["asOf"] = params["asOf"]
    envelope = _search(args, settings)
    if not envelope.get("ok"):
        return _status(envelope), envelope
    return 200, {"ok": True, "hits": envelope.get("results") or [], "warnings": envelope.get("warnings", [])}


def get_record(params: Mapping[str, str], settings: Settings) -> tuple[int, dict[str, Any]]:
    """``GET /api/records/{uid}``: the record, its supersession chain (oldest first) and its links."""
    from ..memory.reader import open_reader
    from ..memory.tools import read_record

    uid = (params.get("uid") or "").strip()
    with open_reader(settings.data_root) as reader:
        record, next_offset, row = read_record(reader, uid)
        chain = _chain(reader, row)
        linked = reader.by_ids([str(x).upper() for x in (row.get("links") or [])])
        mentioned_by = reader.by_ids(reader.mentions_of(row["id"]))
    links = [_header(r) for r in linked.values()] + [
        {**_header(r), "link": "mentions"} for r in mentioned_by.values()
    ]
    data = {"record": record, "chain": chain, "links": links, "next_offset": next_offset}
    return 200, {"ok": True, "data": data, "warnings": []}


def _header(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "title": row.get("title"), "kind": row.get("kind"), "status": row.get("status")}


def _chain(reader: Any, row: Mapping[str, Any], *, limit: int = 50) -> list[dict[str, Any]]:
    """Every record of ``row``'s supersession chain, oldest first (bounded, cycle-safe)."""
    seen: dict[str, Mapping[str, Any]] = {row["id"]: row}
    older, newer = [], []
    current: Mapping[str, Any] = row
    while len(seen) < limit and (current.get("supersedes") or []):
        prev = reader.by_ids([str(current["supersedes"][0]).upper()])
        nxt = next(iter(prev.values()), None)
        if nxt is None or nxt["id"] in seen:
            break
        seen[nxt["id"]] = nxt
        older.append(nxt)
        current = nxt
    current = row
    while len(seen) < limit and current.get("succeeded_by"):
        found = reader.by_ids([str(current["succeeded_by"]).upper()])
        nxt = next(iter(found.values()), None)
        if nxt is None or nxt["id"] in seen:
            break
        seen[nxt["id"]] = nxt
        newer.append(nxt)
        current = nxt
    if not older and not newer:
        return []
    return [_header(r) for r in reversed(older)] + [_header(row)] + [_header(r) for r in newer]


def _status(envelope: Mapping[str, Any]) -> int:
    code = (envelope.get("error") or {}).get("code")
    return {"INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "NOT_INDEXED": 404}.get(str(code), 500)


_ROUTES = {"list_records": list_records, "search_records": search_records, "get_record": get_record}


def dispatch(name: str, params: Mapping[str, str], settings: Settings) -> tuple[int, dict[str, Any]]:
    """Answer one memory route."""
    return _ROUTES[name](params, settings)
