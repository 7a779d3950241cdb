"""The two baselines every quality figure is compared with, run on the very files the index holds.

* **grep** — what an agent does without us: each query word is a fixed-string pattern
  (case-insensitive), and files are ranked by their number of matches (ties by path). Words of
  fewer than 3 characters and a short English stop list are dropped, since ``rg -e the`` matches
  every file. It runs ``rg --count-matches``; where ripgrep is missing it falls back to Python
  ``re`` with the same semantics and the results name the engine used.
* **BM25 over whole files** — ``rank_bm25.BM25Okapi`` (k1=1.5, b=0.75) with plain tokens:
  lower-cased runs of ``[a-z0-9]`` (so ``snake_case`` splits on ``_``, camelCase does not), no
  stemming. Each file is one document.

Both rank files, not spans, so they are scored at file granularity.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from rank_bm25 import BM25Okapi

STOP_WORDS = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its of on or our that the "
    "this to use used uses using what when where which who why with you your we get set".split()
)
_WORD = re.compile(r"[A-Za-z0-9_]+")
_TOKEN = re.compile(r"[a-z0-9]+")


def query_words(query: str) -> list[str]:
    """The grep patterns for a query: distinct words of ≥3 characters that are not stop words."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        low = word.lower()
        if len(low) >= 3 and low not in STOP_WORDS:
            seen.setdefault(low, None)
    return list(seen)


def _read(root: Path, rel: str) -> str:
    try:
        return (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


class GrepBaseline:
    """Rank files by the count of case-insensitive fixed-string matches of the query words."""

    def __init__(self, root: Path, files: Sequence[str]):
        self.root = root
        self.files = sorted(files)
        self.rg: str | None = shutil.which("rg")
        self.engine = "ripgrep" if self.rg else "python-re"
        self._texts: dict[str, str] | None = None

    def version(self) -> str:
        """Engine name and version (for the results JSON)."""
        if not self.rg:
            return "python-re (ripgrep not installed)"
        out = subprocess.run([self.rg, "--version"], capture_output=True, text=True, check=False)
        return out.stdout.splitlines()[0] if out.stdout else "ripgrep"

    def search(self, query: str, limit: int = 100) -> list[str]:
        """Up to ``limit`` repo-relative file paths, most matches first."""
        words = query_words(query)
        if not words:
            return []
        counts = self._counts_rg(words) if self.rg else self._counts_re(words)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return [path for path, _ in ranked[:limit]]

    def _counts_rg(self, words: list[str]) -> dict[str, int]:
        assert self.rg is not None
        cmd: list[str] = [
            self.rg,
            "--count-matches",
            "--ignore-case",
            "--fixed-strings",
            "--no-messages",
            "--no-ignore",
            "--hidden",
            "--with-filename",
            "--no-config",
        ]
        for w in words:
            cmd += ["-e", w]
        counts: dict[str, int] = {}
        # Paths are passed explicitly (in slices, for the argv limit) so rg sees exactly the indexed files.
        for i in range(0, len(self.files), 2000):
            out = subprocess.run(
                cmd + ["--", *self.files[i : i + 2000]],
                cwd=self.root,
                capture_output=True,
                text=True,
                check=False,
            )
            for line in out.stdout.splitlines():
                path, _, count = line.rpartition(":")
                if path and count.isdigit():
                    counts[path] = int(count)
        return counts

    def _counts_re(self, words: list[str]) -> dict[str, int]:
        if self._texts is None:
            self._texts = {f: _read(self.root, f) for f in self.files}
        pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
        counts = {}
        for path, text in self._texts.items():
            n = sum(1 for _ in pattern.finditer(text))
            if n:
                counts[path] = n
        return counts


def bm25_tokens(text: str) -> list[str]:
    """Plain BM25 tokens: lower-cased ``[a-z0-9]+`` runs."""
    return _TOKEN.findall(text.lower())


class BM25Baseline:
    """Okapi BM25 with each whole file as one document."""

    def __init__(self, root: Path, files: Sequence[str]):
        self.files = sorted(files)
        self.bm25 = BM25Okapi([bm25_tokens(_read(root, f)) for f in self.files])

    def search(self, query: str, limit: int = 100) -> list[str]:
        """Up to ``limit`` file paths with a positive score, best first."""
        tokens = bm25_tokens(query)
        if not tokens:
            return []
        scores = self.bm25.get_scores(tokens)
        order = sorted(range(len(self.files)), key=lambda i: (-scores[i], self.files[i]))
        return [self.files[i] for i in order[:limit] if scores[i] > 0]
