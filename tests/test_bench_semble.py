"""The semble bench's fixed split and its knob parsing (no indexing: the data folder only)."""

from __future__ import annotations

from local_memory_search import ranking

from bench import semble


def test_the_split_alternates_over_the_sorted_names():
    names = sorted(r["name"] for r in semble.repos())
    split = semble.halves()
    assert split["tuning"] == names[0::2] and split["reporting"] == names[1::2]
    assert not set(split["tuning"]) & set(split["reporting"])


def test_sweep_specs_set_knobs_and_pass_other_names_to_the_tool():
    knobs, extra = semble.parse_knobs("diversity=0.3,gap_threshold=0,rrf_k=20")
    assert knobs.diversity == 0.3 and knobs.file_name_boost == ranking.KNOBS.file_name_boost
    assert extra == {"gap_threshold": 0.0, "rrf_k": 20}
