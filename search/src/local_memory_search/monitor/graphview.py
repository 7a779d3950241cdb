"""Graph tool answers reshaped for the page's canvas: ``{nodes, edges}`` (pure functions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _node(sym: Mapping[str, Any], role: str) -> dict[str, Any]:
    return {
        "id": sym["id"],
        "label": sym.get("qualified_name") or sym.get("name") or sym["id"],
        "file_path": sym.get("file_path"),
        "line": sym.get("line"),
        "chunk_id": sym.get("chunk_id"),
        "kind": sym.get("kind"),
        "depth": sym.get("depth", 0),
        "role": role,
    }


def call_graph(callers: Mapping[str, Any], callees: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a ``find_callers`` and a ``find_callees`` envelope around the same symbol."""
    data_in = callers.get("data") or {}
    data_out = (callees.get("data") or {}) if callees.get("ok") else {}
    nodes: dict[str, dict[str, Any]] = {}
    center = data_in.get("symbol") or data_out.get("symbol")
    if center:
        nodes[center["id"]] = _node(center, "center")
    for sym in data_in.get("callers") or []:
        nodes.setdefault(sym["id"], _node(sym, "caller"))
    for sym in data_out.get("callees") or []:
        nodes.setdefault(sym["id"], _node(sym, "callee"))
    edges = {}
    for edge in (data_in.get("edges") or []) + (data_out.get("edges") or []):
        if edge.get("caller") in nodes and edge.get("callee") in nodes:
            key = f"{edge['caller']}->{edge['callee']}"
            edges[key] = {
                "id": key,
                "source": edge["caller"],
                "target": edge["callee"],
                "line": edge.get("line"),
            }
    warnings = list(callers.get("warnings") or []) + list(callees.get("warnings") or [])
    data = {
        "symbol": center,
        "status": data_in.get("status"),
        "message": data_in.get("message"),
        "candidates": data_in.get("candidates"),
        "nodes": list(nodes.values()),
        "edges": list(edges.values()),
    }
    return {"ok": True, "data": data, "warnings": warnings}


def import_graph(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """Files as nodes, imports as edges; modules outside the project become ``external`` nodes."""
    data = envelope.get("data") or {}
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[str, dict[str, Any]] = {}

    def add(node_id: str, role: str) -> None:
        nodes.setdefault(node_id, {"id": node_id, "label": node_id, "file_path": node_id, "role": role})

    for imp in (data.get("imports") or []) + (data.get("imported_by") or []):
        source = imp.get("source")
        target = imp.get("target") or f"module:{imp.get('module')}"
        if not source:
            continue
        add(source, "file")
        add(target, "file" if imp.get("target") else "external")
        key = f"{source}->{target}"
        edges[key] = {"id": key, "source": source, "target": target, "line": imp.get("line")}
    for root in data.get("files") or ([data["file_path"]] if data.get("file_path") else []):
        if root in nodes:
            nodes[root]["role"] = "center"
    out = {"file_path": data.get("file_path"), "message": data.get("message"), "nodes": list(nodes.values())}
    out["edges"] = list(edges.values())
    return {"ok": True, "data": out, "warnings": list(envelope.get("warnings") or [])}
