"""Resolve an import as written to the project file (or package directory) it names.

Only the project's own files are targets: standard libraries and third-party packages stay
unresolved (``None``), which ``get_import_graph`` reports as external modules. Resolution is
per language and purely from paths (no build files are read):

- Python: dotted and relative modules; ``from pkg import sub`` resolves to ``pkg/sub.py`` when
  ``sub`` is a module; an absolute module must start at a source root (a folder that is not
  itself a package), so ``import json`` never lands on ``mypkg/json.py``.
- JavaScript / TypeScript: relative (and ``@/`` / ``~/`` → ``src/``) specifiers with extension
  and ``index`` resolution, ``./x.js`` → ``x.ts`` as TypeScript's ESM convention has it.
- Go: the package directory, matched by the longest suffix of the import path that is a folder
  holding ``.go`` files (standard-library roots are never matched).
- Rust: ``mod x;`` and ``crate::`` / ``self::`` / ``super::`` paths to ``x.rs`` or ``x/mod.rs``.
- Java / Kotlin / C#: package paths to ``.java`` / ``.kt`` / ``.cs`` files or package folders.
- C / C++: quoted ``#include`` relative to the file, then by path suffix.
- Ruby: ``require_relative``, and ``require`` of a file under ``lib/`` (or the root).
- PHP: ``require`` / ``include`` of a literal path, ``use`` of a PSR-4 style class path.
- Scala: as Java (``a.b.C`` → ``a/b/C.scala``, ``a.b.*`` → the package folder).
- Lua: ``require("a.b")`` → ``a/b.lua`` or ``a/b/init.lua``, at the root or under any folder
  (Neovim's ``lua/``).
- Elixir: a module by file-name convention, ``Shop.HTTPClient`` → ``lib/shop/http_client.ex``.
- Haskell: ``Data.Map`` → ``Data/Map.hs`` under any source folder.
- Zig: ``@import("x.zig")`` relative to the file; a module name (``@import("clap")``) → ``clap.zig``
  or ``src/clap.zig``; ``std``, ``builtin`` and ``root`` stay external.
- Bash: ``source`` / ``.`` of a path, relative to the file or the root, with leading
  ``$DIR/``-style expansions dropped (whatever is left must be a literal path).
- Swift: no resolver. ``import Foundation`` names a module (a build target), never a file, and a
  module's declarations are visible in all its files: Swift imports stay unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from local_memory_shared.languages import suffixes_of

from .extract import ImportRef

FILE = "file"
DIRECTORY = "directory"

_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_GO_STDLIB_ROOTS = frozenset(
    "archive bufio builtin bytes cmp compress container context crypto database debug embed encoding "
    "errors expvar flag fmt go hash html image index io iter log maps math mime net os path plugin "
    "reflect regexp runtime slices sort strconv strings sync syscall testing text time unicode unique "
    "unsafe C".split()
)
_DOTNET_ROOTS = frozenset({"System", "Microsoft", "Windows"})
_ZIG_BUILTIN_MODULES = frozenset({"std", "builtin", "root"})
_SHELL_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|\$\w+|`[^`]*`")
#: Elixir's ``Macro.underscore``: a word boundary before an upper-case letter
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class Target:
    """Where an import lands: a project file or (Go, Java wildcard, C#) a package directory."""

    path: str
    kind: str = FILE


@dataclass(frozen=True)
class ProjectFiles:
    """Lookup tables over the project's repo-relative file paths."""

    files: frozenset[str]
    by_basename: dict[str, tuple[str, ...]]
    #: folder → extensions of the files directly inside it
    dir_extensions: dict[str, frozenset[str]]
    dirs_by_basename: dict[str, tuple[str, ...]]

    def has_dir(self, path: str, extensions: tuple[str, ...]) -> bool:
        """Whether ``path`` is a folder holding files with one of ``extensions``."""
        found = self.dir_extensions.get(path)
        return found is not None and any(ext in found for ext in extensions)


@lru_cache(maxsize=4)
def project_index(files: frozenset[str]) -> ProjectFiles:
    """Lookup tables for ``files`` (cached: the pipeline passes the same set for every file)."""
    by_basename: dict[str, list[str]] = defaultdict(list)
    dir_extensions: dict[str, set[str]] = defaultdict(set)
    for path in files:
        by_basename[posixpath.basename(path)].append(path)
        directory = posixpath.dirname(path)
        dir_extensions[directory].add(_extension(path))
        # Ancestors exist as folders even when they hold no file directly.
        parent = posixpath.dirname(directory)
        while directory and parent not in dir_extensions:
            dir_extensions[parent] = set()
            directory, parent = parent, posixpath.dirname(parent)
    dirs_by_basename: dict[str, list[str]] = defaultdict(list)
    for directory in dir_extensions:
        if directory:
            dirs_by_basename[posixpath.basename(directory)].append(directory)
    return ProjectFiles(
        files=files,
        by_basename={k: tuple(sorted(v)) for k, v in by_basename.items()},
        dir_extensions={k: frozenset(v) for k, v in dir_extensions.items()},
        dirs_by_basename={k: tuple(sorted(v)) for k, v in dirs_by_basename.items()},
    )


def _extension(path: str) -> str:
    base = posixpath.basename(path)
    return base[base.rfind(".") :] if "." in base else ""


def resolve_import(language: str, file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    """Project targets of ``ref`` imported from ``file_path``; empty when external or unknown."""
    resolver = _RESOLVERS.get(language)
    if resolver is None or not ref.module:
        return []
    if any(" as " in name for name in ref.names):  # `x as y`: the module exports x; `* as m`: the module
        exported = (name.split(" as ")[0] for name in ref.names)
        ref = ImportRef(ref.module, ref.line, tuple(n for n in exported if n not in ("*", "default")))
    return list(dict.fromkeys(resolver(file_path, ref, project)))


# --- shared helpers ---------------------------------------------------------------------------


def _join(*parts: str) -> str | None:
    """Normalised repo-relative path, or None when it climbs out of the project."""
    path = posixpath.normpath(posixpath.join(*parts)) if parts else ""
    if path == ".":
        return ""
    if path.startswith("../") or path == ".." or path.startswith("/"):
        return None
    return path


def _common_prefix_len(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


def _nearest(candidates: list[str], near: str) -> str | None:
    """The candidate sharing the most folders with ``near``; ties go to the shortest path."""
    if not candidates:
        return None
    return min(candidates, key=lambda c: (-_common_prefix_len(c, near), c.count("/"), c))


def _by_suffix(project: ProjectFiles, suffix: str) -> list[str]:
    """Files whose path is ``suffix`` or ends with ``/suffix``."""
    return [
        p
        for p in project.by_basename.get(posixpath.basename(suffix), ())
        if p == suffix or p.endswith("/" + suffix)
    ]


def _dirs_by_suffix(project: ProjectFiles, suffix: str, extensions: tuple[str, ...]) -> list[str]:
    return [
        d
        for d in project.dirs_by_basename.get(posixpath.basename(suffix), ())
        if (d == suffix or d.endswith("/" + suffix)) and project.has_dir(d, extensions)
    ]


# --- per language -----------------------------------------------------------------------------


def _python(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    module = ref.module
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base: str | None = posixpath.dirname(file_path)
        for _ in range(dots - 1):
            base = _join(base, "..") if base else None
            if base is None:
                return []
        parts = [p for p in module[dots:].split(".") if p]
        return _python_relative(base or "", parts, ref.names, project)
    parts = module.split(".")
    found = [Target(p) for name in ref.names if (p := _python_absolute(parts + [name], file_path, project))]
    if len(found) < len(ref.names) or not ref.names:
        own = _python_absolute(parts, file_path, project)
        if own:
            found.append(Target(own))
    return found


def _python_module_file(base: str, parts: list[str], project: ProjectFiles) -> str | None:
    stem = _join(base, *parts) if parts else base
    if stem is None:
        return None
    for candidate in (f"{stem}.py", f"{stem}.pyi", _join(stem, "__init__.py")):
        if candidate in project.files:
            return candidate
    return None


def _python_relative(
    base: str, parts: list[str], names: tuple[str, ...], project: ProjectFiles
) -> list[Target]:
    found = [Target(p) for name in names if (p := _python_module_file(base, parts + [name], project))]
    if len(found) < len(names) or not names:
        own = _python_module_file(base, parts, project)
        if own is None and parts and not names:
            # `from . import helper` where helper is defined in the package's __init__
            own = _python_module_file(base, parts[:-1], project)
        if own:
            found.append(Target(own))
    return found


def _python_absolute(parts: list[str], file_path: str, project: ProjectFiles) -> str | None:
    stem = "/".join(parts)
    candidates = []
    for suffix in (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py"):
        for path in _by_suffix(project, suffix):
            root = path[: len(path) - len(suffix)].rstrip("/")
            # The import must start at a source root, not inside another package.
            if _join(root, "__init__.py") not in project.files:
                candidates.append(path)
    return _nearest(candidates, file_path)


def _javascript(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    spec = ref.module.split("?")[0]
    if spec.startswith("."):
        base = _join(posixpath.dirname(file_path), spec)
    elif spec.startswith(("@/", "~/")):
        base = _join("src", spec[2:])
    elif spec.startswith("/"):
        base = _join(spec.lstrip("/"))
    else:
        return []  # a package from node_modules
    if base is None:
        return []
    stems = [base]
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(ext):
            stems.append(base[: -len(ext)])  # TypeScript ESM writes ./x.js for x.ts
    for stem in stems:
        if stem in project.files:
            return [Target(stem)]
        for candidate in [stem + ext for ext in _JS_EXTENSIONS] + [
            f"{stem}/index{ext}" for ext in _JS_EXTENSIONS
        ]:
            if candidate in project.files:
                return [Target(candidate)]
    return []


def _go(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    parts = [p for p in ref.module.split("/") if p]
    if not parts or parts[0] in _GO_STDLIB_ROOTS:
        return []
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        if project.has_dir(candidate, (".go",)):
            return [Target(candidate, DIRECTORY)]
    return []


def _rust_module_dir(file_path: str) -> str:
    directory, base = posixpath.split(file_path)
    if base in ("lib.rs", "main.rs", "mod.rs"):
        return directory
    return posixpath.join(directory, base[: -len(".rs")]) if base.endswith(".rs") else directory


def _rust_crate_root(file_path: str, project: ProjectFiles) -> str:
    directory = posixpath.dirname(file_path)
    while True:
        if any(posixpath.join(directory, f) in project.files for f in ("lib.rs", "main.rs")):
            return directory
        if not directory:
            return posixpath.dirname(file_path)
        directory = posixpath.dirname(directory)


def _rust_module_file(base: str, parts: list[str], project: ProjectFiles, crate_root: str) -> str | None:
    if not parts:
        if base == crate_root:
            for root_file in ("lib.rs", "main.rs"):
                if (path := _join(base, root_file)) in project.files:
                    return path
        return next((p for p in (f"{base}.rs", _join(base, "mod.rs")) if p in project.files), None)
    stem = _join(base, *parts)
    if stem is None:
        return None
    return next((p for p in (f"{stem}.rs", _join(stem, "mod.rs")) if p in project.files), None)


def _rust(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    path = [p for p in ref.module.split("::") if p]
    if not path:
        return []
    crate_root = _rust_crate_root(file_path, project)
    module_dir = _rust_module_dir(file_path)
    # (base folder, remaining path, anchored): an anchored path may name an item of the base module
    bases: list[tuple[str, list[str], bool]]
    if path[0] == "crate":
        bases = [(crate_root, path[1:], True)]
    elif path[0] == "self":
        bases = [(module_dir, path[1:], True)]
    elif path[0] == "super":
        base = module_dir
        while path and path[0] == "super":
            base = posixpath.dirname(base)
            path = path[1:]
        bases = [(base, path, True)]
    else:
        # a child module declared with `mod`, or (2015 edition) a crate-root module
        bases = [(module_dir, path, False), (crate_root, path, False)]
    for base, rest, anchored in bases:
        found = [
            Target(p)
            for name in ref.names
            if (p := _rust_module_file(base, rest + [name], project, crate_root))
        ]
        if found and len(found) == len(ref.names):
            return found
        # the longest prefix that is a module: the rest are items inside it
        for k in range(len(rest), -1 if anchored else 0, -1):
            own = _rust_module_file(base, rest[:k], project, crate_root)
            if own and own != file_path:
                return found + [Target(own)]
        if found:
            return found
    return []


def _jvm(extensions: tuple[str, ...]):  # type: ignore[no-untyped-def]
    def resolve(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
        module = ref.module
        if module.endswith(".*"):
            package = module[:-2].replace(".", "/")
            found = _nearest(_dirs_by_suffix(project, package, extensions), file_path)
            if found is None:  # `import static pkg.Class.*` names a class
                return _jvm_class(package.split("/"), extensions, project, file_path)
            return [Target(found, DIRECTORY)]
        parts = module.split(".")
        for k in (len(parts), len(parts) - 1):  # Class, or Class.member for static imports
            if k >= 2 and (targets := _jvm_class(parts[:k], extensions, project, file_path)):
                return targets
        if ".kt" in extensions and len(parts) >= 2:
            # Kotlin imports top-level functions by package: the package folder is the target
            found = _nearest(_dirs_by_suffix(project, "/".join(parts[:-1]), extensions), file_path)
            if found is not None:
                return [Target(found, DIRECTORY)]
        return []

    return resolve


def _jvm_class(
    parts: list[str], extensions: tuple[str, ...], project: ProjectFiles, near: str
) -> list[Target]:
    for ext in extensions:
        found = _nearest(_by_suffix(project, "/".join(parts) + ext), near)
        if found is not None:
            return [Target(found)]
    return []


def _csharp(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    parts = [p for p in ref.module.split(".") if p]
    if not parts or parts[0] in _DOTNET_ROOTS:
        return []
    # The root namespace is usually the project folder itself: try shorter suffixes too.
    for start in range(len(parts)):
        suffix = "/".join(parts[start:])
        if found := _nearest(_by_suffix(project, suffix + ".cs"), file_path):
            return [Target(found)]
        if found := _nearest(_dirs_by_suffix(project, suffix, (".cs",)), file_path):
            return [Target(found, DIRECTORY)]
    return []


def _c_family(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    header = ref.module
    local = _join(posixpath.dirname(file_path), header)
    if local is not None and local in project.files:
        return [Target(local)]
    if "/" not in header and header not in project.files:
        # `#include <stdio.h>` or a bare header of an include path we do not know
        matches = _by_suffix(project, header)
        in_include_dirs = [m for m in matches if "/include/" in f"/{m}"]
        found = _nearest(in_include_dirs or matches, file_path) if matches else None
        return [Target(found)] if found else []
    found = _nearest(_by_suffix(project, header), file_path)
    return [Target(found)] if found else []


def _ruby(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    module = ref.module if ref.module.endswith(".rb") else ref.module + ".rb"
    local = _join(posixpath.dirname(file_path), module)
    if local is not None and local in project.files:
        return [Target(local)]  # require_relative (and load of a sibling)
    for candidate in (_join("lib", module), _join(module), _join("app", module)):
        if candidate is not None and candidate in project.files:
            return [Target(candidate)]
    # a gem inside a monorepo: <gem>/lib/<module>
    found = _nearest([p for p in _by_suffix(project, "lib/" + module)], file_path)
    return [Target(found)] if found else []


def _php(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    module = ref.module
    if module.endswith(".php") or "/" in module:
        relative = module.lstrip("/")  # __DIR__ . '/x.php' arrives as '/x.php'
        for candidate in (_join(posixpath.dirname(file_path), relative), _join(relative)):
            if candidate is not None and candidate in project.files:
                return [Target(candidate)]
        return []
    parts = [p for p in module.split("\\") if p]
    # PSR-4 maps the vendor namespace to a folder (src/, app/): drop leading segments.
    for start in range(len(parts)):
        if found := _nearest(_by_suffix(project, "/".join(parts[start:]) + ".php"), file_path):
            return [Target(found)]
    return []


def _nearest_of(project: ProjectFiles, suffixes: list[str], near: str) -> list[Target]:
    """The file nearest to ``near`` among those ending with the first suffix that matches any."""
    for suffix in suffixes:
        if suffix in project.files:
            return [Target(suffix)]
        if found := _nearest(_by_suffix(project, suffix), near):
            return [Target(found)]
    return []


def _lua(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    stem = ref.module.removesuffix(".lua").replace(".", "/")
    return _nearest_of(project, [f"{stem}.lua", f"{stem}/init.lua"], file_path)


def _elixir(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    parts = [_CAMEL_BOUNDARY.sub("_", p).lower() for p in ref.module.split(".") if p]
    if not parts or not ref.module[:1].isupper():
        return []  # an Erlang module (:crypto) or an expression
    path = "/".join(parts)
    suffixes = [f"lib/{path}.ex"]
    if len(parts) > 1:  # a one-word module (Logger, GenServer) outside lib/ is too likely a namesake
        suffixes += [f"{path}.ex", f"{path}.exs"]
    return _nearest_of(project, suffixes, file_path)


def _haskell(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    stem = ref.module.replace(".", "/")
    return _nearest_of(project, [f"{stem}.hs", f"{stem}.lhs"], file_path)


def _zig(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    module = ref.module
    if module.endswith(".zig"):
        local = _join(posixpath.dirname(file_path), module)
        return [Target(local)] if local is not None and local in project.files else []
    if module in _ZIG_BUILTIN_MODULES or "/" in module:
        return []
    # a module the build script names: by convention its root file is <name>.zig or src/<name>.zig
    return [Target(p) for p in (f"{module}.zig", f"src/{module}.zig") if p in project.files][:1]


def _bash(file_path: str, ref: ImportRef, project: ProjectFiles) -> list[Target]:
    # "$DIR/lib/x.sh", "${BASH_SOURCE%/*}/x.sh", "$(dirname "$0")/x.sh": the folder is the file's own
    parts = _SHELL_EXPANSION.sub("\0", ref.module).split("/")
    while parts and "\0" in parts[0]:
        parts = parts[1:]
    relative = "/".join(parts)
    if not relative or "\0" in relative or "$" in relative:
        return []
    for candidate in (_join(posixpath.dirname(file_path), relative), _join(relative)):
        if candidate is not None and candidate in project.files:
            return [Target(candidate)]
    found = _nearest(_by_suffix(project, relative.removeprefix("./")), file_path)
    return [Target(found)] if found else []


_RESOLVERS = {
    "python": _python,
    "javascript": _javascript,
    "typescript": _javascript,
    "tsx": _javascript,
    "go": _go,
    "rust": _rust,
    "java": _jvm(suffixes_of("java")),
    "kotlin": _jvm(suffixes_of("kotlin", "java")),
    "csharp": _csharp,
    "c": _c_family,
    "cpp": _c_family,
    "ruby": _ruby,
    "php": _php,
    "scala": _jvm(suffixes_of("scala", "java")),
    "lua": _lua,
    "elixir": _elixir,
    "haskell": _haskell,
    "zig": _zig,
    "bash": _bash,
}
