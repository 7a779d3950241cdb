"""The one owner of environment variables and their defaults."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import InvalidArgument

DEFAULT_DATA_ROOT = "~/.agent-forge/local-memory-search"
DEFAULT_OLLAMA_BASE_URL = "http://127.0.0.1:11434"
DEFAULT_RERANK_MODEL = "granite4.1:3b"
DEFAULT_RERANK_TIMEOUT = 20.0
DEFAULT_EMBED_BACKEND = "onnx"
DEFAULT_MAX_FILE_BYTES = 1024 * 1024
DEFAULT_SCRATCH_TTL_DAYS = 7
DEFAULT_REVIEW_TTL_DAYS = 30
DEFAULT_HIT_FLUSH_SECONDS = 30.0
DEFAULT_HTTP_SESSION_IDLE_SECONDS = 300.0
#: CPU niceness of an indexing process (see ``priority``).
DEFAULT_INDEX_NICE = 10
#: URI schemes LanceDB opens on an object store (``s3+ddb`` = S3 with a DynamoDB commit table).
REMOTE_SCHEMES = ("s3", "s3+ddb", "gs", "az")

#: Every environment variable a user may set, with its default and meaning (README mirrors it).
ENV_VARS: dict[str, tuple[str, str]] = {
    "LOCAL_VECTOR_SEARCH_DATA_ROOT": (DEFAULT_DATA_ROOT, "Shared data root of indexer and searcher."),
    "LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT": ("(working directory)", "Default project_path when omitted."),
    "EMBED_BACKEND": (DEFAULT_EMBED_BACKEND, "Indexer embedding backend: onnx | ollama | gemini."),
    "EMBED_MODEL": (
        "(per backend)",
        "Embedding model name, or for onnx a folder with model.onnx + tokenizer.json.",
    ),
    "EMBED_DIMENSION": ("(from the model / index)", "Gemini output dimension."),
    "OLLAMA_BASE_URL": (DEFAULT_OLLAMA_BASE_URL, "Ollama server for embeddings and re-ranking."),
    "RERANK_MODEL": (DEFAULT_RERANK_MODEL, "LLM re-ranker for retrieve_context_pack(rerank=true)."),
    "RERANK_TIMEOUT": (
        str(DEFAULT_RERANK_TIMEOUT),
        "Seconds one re-rank may take before the pack keeps retrieval order.",
    ),
    "GEMINI_API_KEY / GOOGLE_API_KEY": ("—", "Gemini key; takes precedence over key files."),
    "GOOGLE_API_KEY_FILE": ("—", "Explicit path to a Gemini key file."),
    "GEMINI_BASE_URL": ("(Google's endpoint)", "Override of the Gemini API base URL (proxies, tests)."),
    "LOCAL_MEMORY_MAX_FILE_BYTES": (str(DEFAULT_MAX_FILE_BYTES), "Files larger than this are skipped."),
    "LOCAL_MEMORY_EMBED_THREADS": ("(all cores)", "ONNX Runtime intra-op threads."),
    "LOCAL_MEMORY_PREWARM_ENCODER": (
        "1",
        "1: the search server loads the ONNX query model at start (first hybrid answer sooner); "
        "0: on the first semantic query (a keyword-only session never holds it, ~90-150 MB less).",
    ),
    "LOCAL_MEMORY_COMPACT_QUERY_MODEL": (
        "1",
        "1: queries are encoded with the compact int8 copy of the ONNX model the indexer writes under "
        "<data root>/models (about 65 MB less); 0: with the original model file.",
    ),
    "LOCAL_MEMORY_MALLOC_ARENAS": (
        "2",
        "glibc malloc arenas of a search or indexer process (0 = glibc's default, 8 per core); fewer hold "
        "less memory.",
    ),
    "LOCAL_MEMORY_INDEX_NICE": (
        str(DEFAULT_INDEX_NICE),
        "CPU niceness (0-19) an indexing process (index command, indexer server) takes at start, so searches "
        "come first while a project is (re-)indexed; 0 leaves the priority it was started with; idle: Linux's "
        "SCHED_IDLE class (the indexer runs only on CPU time nothing else wants; niceness 19 elsewhere).",
    ),
    "LOCAL_MEMORY_HTTP_TOKEN": ("—", "Bearer token the MCP servers require on --http (or pass --token)."),
    "LOCAL_MEMORY_HTTP_SESSION_IDLE_SECONDS": (
        str(DEFAULT_HTTP_SESSION_IDLE_SECONDS),
        "An --http MCP session with no request for this long is closed and its memory freed.",
    ),
    "LOCAL_MEMORY_LANCE_URI": (
        "(unset: LanceDB under the data root)",
        "Object-store root of the LanceDB data (s3://, s3+ddb://, gs://, az://); state stays in the data root.",
    ),
    "LOCAL_MEMORY_LANCE_STORAGE_OPTIONS": (
        "—",
        "Extra LanceDB storage options as a JSON object (the AWS_* variables are read already).",
    ),
    "LOCAL_MEMORY_VAULT": ("<data root>/vault", "Agent memory vault: a git repo of Markdown records."),
    "LOCAL_MEMORY_SCRATCH_TTL_DAYS": (
        str(DEFAULT_SCRATCH_TTL_DAYS),
        "Days until a new scratch memory expires (0 = never).",
    ),
    "LOCAL_MEMORY_REVIEW_TTL_DAYS": (
        str(DEFAULT_REVIEW_TTL_DAYS),
        "Days until a new review memory expires (0 = never).",
    ),
    "LOCAL_MEMORY_HIT_FLUSH_SECONDS": (
        str(DEFAULT_HIT_FLUSH_SECONDS),
        "How often the indexer writes hit counters back into the vault's frontmatter.",
    ),
    "LOCAL_MEMORY_IGNORED_AREAS": (
        "—",
        "Comma-separated folders/globs of capture-ignored product areas: a memory search whose path lies inside one answers nothing.",
    ),
}


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else None


#: What an on/off variable may say to mean off (any other non-empty value means on).
_OFF = frozenset({"0", "false", "no", "off"})


def _flag(name: str, default: bool) -> bool:
    """An on/off setting: unset or empty is ``default``; ``0``/``false``/``no``/``off`` is off."""
    raw = _env(name)
    return default if raw is None else raw.strip().lower() not in _OFF


def http_session_idle_seconds() -> float:
    """Idle timeout of a streamable-HTTP MCP session (a positive number of seconds)."""
    raw = _env("LOCAL_MEMORY_HTTP_SESSION_IDLE_SECONDS")
    try:
        value = float(raw) if raw else DEFAULT_HTTP_SESSION_IDLE_SECONDS
    except ValueError:
        value = DEFAULT_HTTP_SESSION_IDLE_SECONDS
    return value if 0 < value < float("inf") else DEFAULT_HTTP_SESSION_IDLE_SECONDS


def _non_negative_int(name: str, default: int) -> int:
    """An integer setting ≥ 0, or InvalidArgument naming the variable."""
    raw = _env(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidArgument(f"{name} must be a whole number ≥ 0, got {raw!r}", field=name)
    return value


def parse_lance_uri(raw: str | None) -> str | None:
    """A validated remote root URI (no trailing ``/``), or None for the local default."""
    if raw is None or not raw.strip():
        return None
    uri = raw.strip().rstrip("/")
    parts = urlsplit(uri)
    if parts.scheme not in REMOTE_SCHEMES or not parts.netloc:
        raise InvalidArgument(
            f"LOCAL_MEMORY_LANCE_URI {uri[:200]!r} must look like s3://bucket/prefix "
            f"(schemes: {', '.join(REMOTE_SCHEMES)})",
            field="LOCAL_MEMORY_LANCE_URI",
        )
    return uri


def storage_options_from_env() -> dict[str, str]:
    """LanceDB ``storage_options`` from the standard variables and ``LOCAL_MEMORY_LANCE_STORAGE_OPTIONS``."""
    out: dict[str, str] = {}
    pairs = {
        "aws_access_key_id": "AWS_ACCESS_KEY_ID",
        "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
        "aws_session_token": "AWS_SESSION_TOKEN",
        "aws_endpoint": "AWS_ENDPOINT_URL",
    }
    for option, var in pairs.items():
        value = _env(var)
        if value:
            out[option] = value
    region = _env("AWS_REGION") or _env("AWS_DEFAULT_REGION")
    if region:
        out["aws_region"] = region
    if out.get("aws_endpoint", "").startswith("http://"):
        out["allow_http"] = "true"
    extra = _env("LOCAL_MEMORY_LANCE_STORAGE_OPTIONS")
    if extra:
        try:
            parsed = json.loads(extra)
        except ValueError as exc:
            raise InvalidArgument(
                f"LOCAL_MEMORY_LANCE_STORAGE_OPTIONS is not JSON: {exc}",
                field="LOCAL_MEMORY_LANCE_STORAGE_OPTIONS",
            ) from exc
        if not isinstance(parsed, dict):
            raise InvalidArgument(
                "LOCAL_MEMORY_LANCE_STORAGE_OPTIONS must be a JSON object of strings",
                field="LOCAL_MEMORY_LANCE_STORAGE_OPTIONS",
            )
        out.update({str(k): str(v) for k, v in parsed.items()})
    return out


@dataclass(frozen=True)
class Settings:
    """A snapshot of the environment; call :func:`load_settings` for a fresh one."""

    data_root: Path
    default_project: Path
    embed_backend: str
    embed_model: str | None
    embed_dimension: int | None
    ollama_base_url: str
    rerank_model: str
    max_file_bytes: int
    embed_threads: int | None
    gemini_base_url: str | None = None
    rerank_timeout: float = DEFAULT_RERANK_TIMEOUT
    #: Object-store root of the LanceDB data (``LOCAL_MEMORY_LANCE_URI``), None = under data_root.
    lance_uri: str | None = None
    prewarm_encoder: bool = True
    compact_query_model: bool = True
    malloc_arenas: int = 2
    #: CPU niceness an indexing process takes at start (``LOCAL_MEMORY_INDEX_NICE``; 0 = unchanged).
    index_nice: int = DEFAULT_INDEX_NICE
    #: ``LOCAL_MEMORY_INDEX_NICE=idle``: the indexer also takes Linux's SCHED_IDLE class (``priority``).
    index_idle: bool = False
    release_library_pages: bool = True


def load_settings() -> Settings:
    """Read the environment now (tests change it, so never cache this at import)."""
    dim = _env("EMBED_DIMENSION")
    threads = _env("LOCAL_MEMORY_EMBED_THREADS")
    return Settings(
        data_root=Path(_env("LOCAL_VECTOR_SEARCH_DATA_ROOT") or DEFAULT_DATA_ROOT).expanduser(),
        default_project=Path(_env("LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT") or os.getcwd()).expanduser(),
        embed_backend=(_env("EMBED_BACKEND") or DEFAULT_EMBED_BACKEND).lower(),
        embed_model=_env("EMBED_MODEL"),
        embed_dimension=int(dim) if dim else None,
        ollama_base_url=(_env("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_BASE_URL).rstrip("/"),
        rerank_model=_env("RERANK_MODEL") or DEFAULT_RERANK_MODEL,
        max_file_bytes=int(_env("LOCAL_MEMORY_MAX_FILE_BYTES") or DEFAULT_MAX_FILE_BYTES),
        embed_threads=int(threads) if threads else None,
        gemini_base_url=(_env("GEMINI_BASE_URL") or "").rstrip("/") or None,
        rerank_timeout=float(_env("RERANK_TIMEOUT") or DEFAULT_RERANK_TIMEOUT),
        lance_uri=parse_lance_uri(_env("LOCAL_MEMORY_LANCE_URI")),
        prewarm_encoder=_flag("LOCAL_MEMORY_PREWARM_ENCODER", True),
        compact_query_model=_flag("LOCAL_MEMORY_COMPACT_QUERY_MODEL", True),
        malloc_arenas=_non_negative_int("LOCAL_MEMORY_MALLOC_ARENAS", 2),
        index_nice=_index_nice(),
        index_idle=_index_idle(),
        release_library_pages=_flag("LOCAL_MEMORY_RELEASE_LIBRARY_PAGES", True),
    )


#: ``LOCAL_MEMORY_INDEX_NICE``'s word for the SCHED_IDLE class (niceness 19 where there is none).
INDEX_NICE_IDLE = "idle"


def _index_idle() -> bool:
    return (_env("LOCAL_MEMORY_INDEX_NICE") or "").strip().lower() == INDEX_NICE_IDLE


def _index_nice() -> int:
    """``LOCAL_MEMORY_INDEX_NICE``: a niceness 0-19 (``idle``: 19), or InvalidArgument naming the variable."""
    if _index_idle():
        return 19
    value = _non_negative_int("LOCAL_MEMORY_INDEX_NICE", DEFAULT_INDEX_NICE)
    if value > 19:
        raise InvalidArgument(
            f"LOCAL_MEMORY_INDEX_NICE must be a niceness from 0 to 19 or 'idle', got {value}",
            field="LOCAL_MEMORY_INDEX_NICE",
        )
    return value


@dataclass(frozen=True)
class MemorySettings:
    """Agent-memory settings; call :func:`load_memory_settings` for a fresh one."""

    data_root: Path
    vault: Path
    scratch_ttl_days: float
    review_ttl_days: float
    hit_flush_seconds: float
    #: seed 000's capture-ignored product areas (folders or globs of code paths)
    ignored_areas: tuple[str, ...] = ()


def load_memory_settings() -> MemorySettings:
    """Read the memory part of the environment now."""
    data_root = load_settings().data_root
    vault = _env("LOCAL_MEMORY_VAULT")
    return MemorySettings(
        data_root=data_root,
        vault=Path(vault).expanduser() if vault else data_root / "vault",
        scratch_ttl_days=float(_env("LOCAL_MEMORY_SCRATCH_TTL_DAYS") or DEFAULT_SCRATCH_TTL_DAYS),
        review_ttl_days=float(_env("LOCAL_MEMORY_REVIEW_TTL_DAYS") or DEFAULT_REVIEW_TTL_DAYS),
        hit_flush_seconds=float(_env("LOCAL_MEMORY_HIT_FLUSH_SECONDS") or DEFAULT_HIT_FLUSH_SECONDS),
        ignored_areas=tuple(
            a.strip() for a in (_env("LOCAL_MEMORY_IGNORED_AREAS") or "").split(",") if a.strip()
        ),
    )
