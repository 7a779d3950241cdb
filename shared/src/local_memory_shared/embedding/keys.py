"""Find the Gemini API key in seed 003's order, without ever logging the key itself.

Order: env ``GEMINI_API_KEY``, env ``GOOGLE_API_KEY``, the file named by env
``GOOGLE_API_KEY_FILE``, ``~/.config/agent-forge/gemini.key`` (shared with the indexer),
and the legacy ``~/.google_api_key`` last.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EmbeddingError

logger = logging.getLogger(__name__)

KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
KEY_FILE_ENV_VAR = "GOOGLE_API_KEY_FILE"
DEFAULT_KEY_FILE = Path(".config/agent-forge/gemini.key")
LEGACY_KEY_FILE = Path(".google_api_key")


@dataclass(frozen=True)
class ApiKey:
    """A key and where it came from; ``repr`` never shows the key."""

    value: str = field(repr=False)
    source: str


def _read_key_file(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EmbeddingError(f"Cannot read Gemini key file {path}: {exc.strerror}") from exc
    # The first non-blank, non-comment line is the key; editors like to add trailing newlines.
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    return None


def find_gemini_key(env: Mapping[str, str] | None = None, home: Path | None = None) -> ApiKey:
    """Return the first Gemini key found in seed 003's order, or raise EmbeddingError naming every place tried."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    looked: list[str] = []

    for name in KEY_ENV_VARS:
        value = (env.get(name) or "").strip()
        if value:
            return ApiKey(value, f"env {name}")
        looked.append(f"env {name}")

    explicit = (env.get(KEY_FILE_ENV_VAR) or "").strip()
    if explicit:
        path = Path(explicit).expanduser()
        from_file = _read_key_file(path)
        if from_file:
            return ApiKey(from_file, str(path))
        # An explicitly named file that is missing or empty is a mistake worth reporting,
        # not something to paper over with a key from somewhere else.
        raise EmbeddingError(
            f"{KEY_FILE_ENV_VAR} points to {path}, which is missing or empty",
            details={"looked_in": [*looked, str(path)]},
        )
    looked.append(f"env {KEY_FILE_ENV_VAR} (unset)")

    for relative in (DEFAULT_KEY_FILE, LEGACY_KEY_FILE):
        path = home / relative
        from_file = _read_key_file(path)
        if from_file:
            if relative == LEGACY_KEY_FILE:
                logger.info("Using the legacy Gemini key file %s; prefer %s", path, home / DEFAULT_KEY_FILE)
            return ApiKey(from_file, str(path))
        looked.append(str(path))

    raise EmbeddingError(
        "No Gemini API key found; looked in: " + ", ".join(looked),
        details={"looked_in": looked},
    )
