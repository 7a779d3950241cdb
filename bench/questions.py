"""Hand-written questions about the pinned corpora (``bench/questions/<corpus>.jsonl``).

Each line: ``{"id", "corpus", "question", "answers": [{"file", "symbol", "lines": [start, end]}]}``.
The question is phrased as an agent would ask it; ``answers`` are the definitions that answer it
(several when more than one place is a correct answer). ``lines`` are derived from ``symbol``
by ``python -m bench.questions --label`` and re-checked on every run, so a label cannot
silently drift from the pinned source.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .spans import definition_span

QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"


@dataclass(frozen=True)
class Answer:
    """One labelled answer span."""

    file: str
    symbol: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Question:
    """One hand-written question with its labelled answers."""

    id: str
    corpus: str
    question: str
    answers: tuple[Answer, ...]


def question_files() -> list[Path]:
    """Every questions file, sorted."""
    return sorted(QUESTIONS_DIR.glob("*.jsonl"))


def load(corpus: str) -> list[Question]:
    """Questions about ``corpus``."""
    path = QUESTIONS_DIR / f"{corpus}.jsonl"
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        answers = tuple(
            Answer(a["file"], a["symbol"], int(a["lines"][0]), int(a["lines"][1])) for a in raw["answers"]
        )
        out.append(Question(raw["id"], raw["corpus"], raw["question"], answers))
    return out


def verify(questions: list[Question], root: Path) -> list[str]:
    """Problems where a label's lines no longer match its symbol in ``root`` (empty when all hold)."""
    problems = []
    for q in questions:
        for a in q.answers:
            try:
                span = definition_span(root, a.file, a.symbol)
            except (KeyError, OSError, SyntaxError) as exc:
                problems.append(f"{q.id}: {exc}")
                continue
            if span != (a.start_line, a.end_line):
                problems.append(
                    f"{q.id}: {a.file}:{a.symbol} is at {span}, label says {(a.start_line, a.end_line)}"
                )
    return problems


def label(corpus: str, root: Path) -> int:
    """Fill every answer's ``lines`` from its symbol; returns the number of questions written."""
    path = QUESTIONS_DIR / f"{corpus}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row in rows:
        for a in row["answers"]:
            a["lines"] = list(definition_span(root, a["file"], a["symbol"]))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def main() -> None:
    """``python -m bench.questions --label``: (re)derive the line spans of every answer."""
    from .corpora import fetch

    if "--label" not in sys.argv[1:]:
        raise SystemExit("usage: python -m bench.questions --label")
    for path in question_files():
        corpus = fetch(path.stem)
        n = label(path.stem, corpus.root)
        sys.stdout.write(f"{path.name}: {n} questions labelled\n")


if __name__ == "__main__":
    main()
