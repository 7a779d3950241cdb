"""On/off settings: one parse for every flag variable (unset/empty = the default; 0/false/no/off = off)."""

from __future__ import annotations

import pytest
from local_memory_shared.config import load_settings

FLAGS = {
    "LOCAL_MEMORY_PREWARM_ENCODER": ("prewarm_encoder", True),
    "LOCAL_MEMORY_COMPACT_QUERY_MODEL": ("compact_query_model", True),
    "LOCAL_MEMORY_RELEASE_LIBRARY_PAGES": ("release_library_pages", True),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_every_flag_reads_the_same_words(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    field, default = FLAGS[name]
    monkeypatch.delenv(name, raising=False)
    assert getattr(load_settings(), field) is default
    for raw, want in [("", default), ("0", False), ("off", False), (" No ", False), ("FALSE", False),
                      ("1", True), ("yes", True), ("on", True)]:  # fmt: skip
        monkeypatch.setenv(name, raw)
        assert getattr(load_settings(), field) is want, (name, raw)
