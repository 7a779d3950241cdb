"""Discovery: ignore rules at every level, skip reasons, symlinks that leave or loop."""

from __future__ import annotations

import os
from pathlib import Path

from local_memory_indexer.discovery import discover, is_secret_name


def write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def paths(root: Path, **kw) -> set[str]:
    return {f.path for f in discover(root, max_file_bytes=kw.get("max_file_bytes", 1 << 20)).files}


def test_gitignore_at_every_level_with_negation(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\nsecret_dir/\n")
    write(tmp_path, "app.py")
    write(tmp_path, "debug.log", "log")
    write(tmp_path, "secret_dir/a.py")
    write(tmp_path, "pkg/.gitignore", "generated_*.py\n!keep.log\n")
    write(tmp_path, "pkg/mod.py")
    write(tmp_path, "pkg/generated_api.py")
    write(tmp_path, "pkg/keep.log", "kept by the deeper negation")
    write(tmp_path, "other/generated_api.py")  # the pkg rule must not reach here
    found = paths(tmp_path)
    assert found == {"app.py", "pkg/mod.py", "pkg/keep.log", "other/generated_api.py"}


def test_localmemoryignore(tmp_path: Path) -> None:
    write(tmp_path, ".localmemoryignore", "docs/private/\n*.sql\n")
    write(tmp_path, "docs/private/notes.md", "# private")
    write(tmp_path, "docs/public.md", "# public")
    write(tmp_path, "schema.sql", "create table t(x int);")
    assert paths(tmp_path) == {"docs/public.md"}


def test_skip_reasons_are_counted(tmp_path: Path) -> None:
    write(tmp_path, "main.py")
    write(tmp_path, "node_modules/lib/index.js", "module.exports = 1")
    write(tmp_path, ".venv/lib/x.py")
    write(tmp_path, "dist/bundle.js", "x")
    write(tmp_path, "web/app.min.js", "var a=1")
    write(tmp_path, ".env", "API_KEY=hunter2")
    write(tmp_path, ".env.production", "API_KEY=hunter2")
    write(tmp_path, "certs/server.pem", "-----BEGIN")
    write(tmp_path, "id_rsa", "-----BEGIN")
    write(tmp_path, "aws_credentials.json", "{}")
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(tmp_path, "data.txt", b"abc\x00def")
    write(tmp_path, "big.py", "x = 1\n" * 400)
    result = discover(tmp_path, max_file_bytes=1000)
    assert {f.path for f in result.files} == {"main.py"}
    assert result.skipped["vendored"] == 3
    assert result.skipped["generated"] == 1
    assert result.skipped["secret"] == 5
    assert result.skipped["binary"] == 2
    assert result.skipped["too_large"] == 1


def test_env_example_is_not_a_secret() -> None:
    assert not is_secret_name(".env.example")
    assert is_secret_name(".env.local")
    assert is_secret_name("prod.key")
    assert not is_secret_name("keyboard.py")


def test_symlinks_never_leave_the_project_and_loops_terminate(tmp_path: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    write(outside, "leak.py", "password = 'x'\n")
    write(project, "src/real.py")
    os.symlink(outside, project / "escape_dir")
    os.symlink(outside / "leak.py", project / "escape.py")
    os.symlink(project / "src", project / "src" / "loop")  # a loop back to its parent
    os.symlink(project / "src" / "real.py", project / "alias.py")  # inside: allowed
    result = discover(project, max_file_bytes=1 << 20)
    found = {f.path for f in result.files}
    assert "escape_dir/leak.py" not in found and "escape.py" not in found
    assert {"src/real.py", "alias.py"} <= found
    assert result.skipped["symlink_outside"] == 2
    assert result.skipped["symlink_loop"] >= 1


def test_languages_are_assigned(tmp_path: Path) -> None:
    for rel in [
        "a.py",
        "b.ts",
        "c.tsx",
        "d.go",
        "e.rs",
        "f.java",
        "g.kt",
        "h.cs",
        "i.rb",
        "j.php",
        "k.cpp",
        "l.c",
        "m.md",
        "n.toml",
    ]:
        write(tmp_path, rel, "x\n")
    langs = {f.path: f.language for f in discover(tmp_path, max_file_bytes=1 << 20).files}
    assert langs["a.py"] == "python" and langs["b.ts"] == "typescript" and langs["c.tsx"] == "tsx"
    assert langs["h.cs"] == "csharp" and langs["g.kt"] == "kotlin" and langs["m.md"] == "markdown"
    assert langs["n.toml"] == "text"


def test_minified_one_liners_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "vendor.js", "var a=1;" * 2000)  # one 16 KB line: a bundle without .min in its name
    write(tmp_path, "app.js", "function a() {\n  return 1;\n}\n" * 400)
    result = discover(tmp_path, max_file_bytes=1 << 20)
    assert {f.path for f in result.files} == {"app.js"}
    assert result.skipped["minified"] == 1


# -- issue 15.5: secrets never enter through a symlink, an unusual name or their content ------------

# Token-shaped strings are assembled at run time so this file itself holds none.
FAKE_TOKENS = {
    "aws_access_key_id": "AKIA" + "IOSFODNN7EXAMPLE",
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop",
    "slack_token": "xoxb-" + "123456789012-abcdefghijkl",
    "openai_anthropic_key": "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "google_api_key": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "private_key": "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END",
}


def test_symlinks_to_secrets_are_skipped_by_their_target_name(tmp_path: Path) -> None:
    write(tmp_path, "app.py")
    write(tmp_path, ".env", "API_KEY=hunter2\n")
    write(tmp_path, "id_rsa", "not really a key but a secret by name\n")
    write(tmp_path, ".aws/credentials", "[default]\naws_secret=1\n")
    os.symlink(tmp_path / ".env", tmp_path / "settings.txt")
    os.symlink("id_rsa", tmp_path / "key_backup.md")
    os.symlink(tmp_path / ".aws", tmp_path / "cloud")  # a folder link: cloud/credentials is .aws/credentials
    result = discover(tmp_path, max_file_bytes=1 << 20)
    assert {f.path for f in result.files} == {"app.py"}
    assert result.skipped["secret"] == 5


def test_unusual_secret_names_and_paths_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "main.py")
    for rel in (
        ".envrc",
        ".pgpass",
        ".docker/config.json",
        "infra/prod.tfstate",
        "infra/prod.tfstate.backup",
        ".git-credentials",
        ".aws/credentials",
        "home/.kube/config",
    ):
        write(tmp_path, rel, "secret = 1\n")
    write(tmp_path, "docker/config.json", '{"not": "a docker login"}\n')  # only .docker/ is special
    write(tmp_path, "kube/config", "plain = 1\n")
    result = discover(tmp_path, max_file_bytes=1 << 20)
    assert {f.path for f in result.files} == {"main.py", "docker/config.json", "kube/config"}
    assert result.skipped["secret"] == 8


def test_files_whose_content_carries_a_secret_are_skipped_and_counted(tmp_path: Path) -> None:
    write(tmp_path, "clean.py", "def f():\n    return 'sk-short'  # not a key\n")
    for name, token in FAKE_TOKENS.items():
        write(tmp_path, f"{name}.py", f"# config\nTOKEN = '{token}'\n")
    result = discover(tmp_path, max_file_bytes=1 << 20)
    assert {f.path for f in result.files} == {"clean.py"}
    assert result.skipped["secret_content"] == len(FAKE_TOKENS)
    # skip_secrets=False (the knob for tests) lets them through again.
    assert len(discover(tmp_path, max_file_bytes=1 << 20, skip_secrets=False).files) == 1 + len(FAKE_TOKENS)


# -- issue 15.6 / 15.7: odd files never stop or hang a walk ------------------------------------------


def test_non_utf8_names_fifos_and_device_links_are_skipped_not_fatal(tmp_path: Path) -> None:
    write(tmp_path, "ok.py")
    bad = os.fsencode(tmp_path) + b"/caf\xe9.py"
    with open(bad, "wb") as fh:
        fh.write(b"x = 1\n")
    os.mkdir(os.fsencode(tmp_path) + b"/dir\xff")
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    result = discover(tmp_path, max_file_bytes=1 << 20)
    assert {f.path for f in result.files} == {"ok.py"}
    assert result.skipped["bad_name"] == 2
    assert result.skipped["special"] == 1
    assert result.skipped["symlink_outside"] == 1


def test_the_filesystem_root_is_refused() -> None:
    import pytest
    from local_memory_shared.errors import InvalidArgument

    with pytest.raises(InvalidArgument) as err:
        discover(Path("/"), max_file_bytes=1 << 20)
    assert err.value.field == "project_path"


def test_index_of_an_empty_path_is_an_error_not_the_working_directory(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    write(tmp_path / "cwd", "should_not_be_indexed.py")
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data")}
    out = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "index", "", "--json"],
        cwd=tmp_path / "cwd",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1, out.stderr
    envelope = json.loads(out.stdout)
    assert envelope["ok"] is False and envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert envelope["error"]["field"] == "path"
    assert not (tmp_path / "data" / "projects").exists()


def test_an_unusable_data_root_answers_the_error_envelope_not_a_traceback(tmp_path):
    """A data root that cannot be written (here: a path under a regular file) is a STORE_ERROR envelope."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text("def f():\n    return 1\n")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(blocker / "data")}
    exe = str(Path(sys.executable).with_name("local-memory-indexer"))
    out = subprocess.run(
        [exe, "index", str(project), "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    envelope = json.loads(out.stdout)
    assert envelope["ok"] is False and envelope["error"]["code"] == "STORE_ERROR"


def test_pattern_sets_match_exactly_as_glob_by_glob_fnmatch():
    """The walk's one-regex-per-set matcher agrees with ``fnmatchcase`` on every secret/generated glob."""
    import fnmatch

    from local_memory_shared import discovery

    sets = (discovery.SECRET_PATTERNS, discovery.GENERATED_PATTERNS)
    samples = {
        p.replace("*", fill).replace("?", "q") for ps in sets for p in ps for fill in ("", "ab", ".x/")
    }
    samples |= {s.upper() for s in samples} | {"main.py", "README.md", "pom.xml", ".envrc", "id_rsa.pub.txt"}
    for patterns in sets:
        for name in sorted(samples):
            want = any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in patterns)
            assert discovery._matches(name, patterns) is want, (name, want)
