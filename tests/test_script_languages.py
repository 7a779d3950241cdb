"""Scripts without a suffix take the language their ``#!`` line names; Ruby's named files and
``.rake`` / ``.gemspec`` are Ruby (``languages.language_for_source`` / ``language_for_path``).

Before, ``bin/deploy`` (``#!/usr/bin/env bash``) and a ``Rakefile`` were plain text: cut into
windows, no function chunk, nothing in the symbol table. Real files, real tree-sitter, the real
model, LanceDB and SQLite.
"""

from __future__ import annotations

import pytest
from local_memory_shared.languages import language_for_path, language_for_source, shebang_language
from search_support import index, state_rw, write_project


@pytest.mark.parametrize(
    ("first_line", "language"),
    [
        (b"#!/bin/sh", "bash"),
        (b"#!/bin/bash -e", "bash"),
        (b"#! /usr/bin/env bash", "bash"),
        (b"#!/usr/bin/env -S python3 -u", "python"),
        (b"#!/usr/bin/python3.11", "python"),
        (b"#!/usr/bin/env FOO=1 node", "javascript"),
        (b"#!/usr/bin/env ruby", "ruby"),
        (b"#!/usr/bin/lua", "lua"),
        (b"#!/usr/bin/perl -w", None),  # no grammar: stays text
        (b"# not a shebang", None),
    ],
)
def test_the_shebang_names_the_language(first_line: bytes, language: str | None) -> None:
    data = first_line + b"\necho hi\n"
    assert shebang_language(data) == language
    assert language_for_source("bin/tool", data) == (language or "text")


def test_only_a_file_without_suffix_is_read_by_its_shebang() -> None:
    assert language_for_source("notes.txt", b"#!/bin/sh\n") == "text"
    assert language_for_source("setup.py", b"#!/bin/sh\n") == "python"
    assert language_for_source("bin/tool", b"echo hi\n") == "text"


def test_ruby_files_by_name_and_suffix() -> None:
    for path in ("Rakefile", "sub/Gemfile", "lib/tasks/db.rake", "kit.gemspec"):
        assert language_for_path(path) == "ruby", path
    assert language_for_path("rakefile.md") == "markdown"
    assert language_for_path("Makefile") == "text"


FILES = {
    "bin/deploy": """#!/usr/bin/env bash
set -euo pipefail

# Copy the release to the servers and switch the current link.
deploy_release() {
  local version="$1"
  rsync -a "build/$version/" "app@$HOST:/srv/releases/$version/"
}

deploy_release "$@"
""",
    "lib/tasks/cache.rake": """namespace :cache do
  desc "Empty the page cache"
  task :clear do
    PageCache.clear_all
  end
end

def warm_cache(pages)
  pages.each { |page| PageCache.fetch(page) }
end
""",
    "Rakefile": """require_relative "config/application"

def release_tag(version)
  "v#{version}"
end
""",
}


def test_scripts_are_chunked_in_their_language(tmp_path_factory: pytest.TempPathFactory) -> None:
    project = write_project(tmp_path_factory.mktemp("scripts"), FILES)
    root = tmp_path_factory.mktemp("scripts-data")
    summary = index(project, root)
    assert not summary.errors
    conn = state_rw(root, project)
    try:
        languages = {r[0]: r[1] for r in conn.execute("SELECT path, language FROM files")}
        symbols = {(r[0], r[1]) for r in conn.execute("SELECT file_path, name FROM symbols")}
        functions = {
            (r[0], r[1])
            for r in conn.execute("SELECT file_path, symbol_name FROM chunks WHERE chunk_kind = 'function'")
        }
    finally:
        conn.close()
    assert languages == {"bin/deploy": "bash", "lib/tasks/cache.rake": "ruby", "Rakefile": "ruby"}
    assert {
        ("bin/deploy", "deploy_release"),
        ("lib/tasks/cache.rake", "warm_cache"),
        ("Rakefile", "release_tag"),
    } <= (symbols)
    assert ("bin/deploy", "deploy_release") in functions
