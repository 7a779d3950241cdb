"""Import resolution to project files, per language, including the cases that must stay unresolved."""

from __future__ import annotations

import pytest
from local_memory_indexer.graph import ImportRef, project_index, resolve_import
from local_memory_indexer.graph.resolve import DIRECTORY, FILE


def resolve(
    language: str, importer: str, module: str, files: set[str], names: tuple[str, ...] = ()
) -> list[str]:
    project = project_index(frozenset(files | {importer}))
    return [t.path for t in resolve_import(language, importer, ImportRef(module, 1, names), project)]


PY = {
    "src/shop/__init__.py",
    "src/shop/models.py",
    "src/shop/api/__init__.py",
    "src/shop/api/views.py",
    "src/shop/json.py",
    "tests/test_views.py",
}


@pytest.mark.parametrize(
    ("importer", "module", "names", "expected"),
    [
        ("src/shop/api/views.py", "shop.models", (), ["src/shop/models.py"]),  # src layout
        ("src/shop/api/views.py", "..models", (), ["src/shop/models.py"]),
        ("src/shop/api/views.py", ".", (), ["src/shop/api/__init__.py"]),
        ("src/shop/api/views.py", "..", ("models", "json"), ["src/shop/models.py", "src/shop/json.py"]),
        ("tests/test_views.py", "shop.api", ("views",), ["src/shop/api/views.py"]),  # a submodule by name
        (
            "tests/test_views.py",
            "shop.api",
            ("render",),
            ["src/shop/api/__init__.py"],
        ),  # a name in the package
        ("src/shop/models.py", "json", (), []),  # the stdlib, never shop/json.py inside a package
        ("src/shop/models.py", "requests", (), []),
        ("src/shop/models.py", "....too.high", (), []),
    ],
)
def test_python(importer: str, module: str, names: tuple[str, ...], expected: list[str]) -> None:
    assert resolve("python", importer, module, PY, names) == expected


JS = {"src/a.ts", "src/b/index.tsx", "src/c.js", "src/types.d.ts", "src/lib/util.mjs"}


@pytest.mark.parametrize(
    ("importer", "module", "expected"),
    [
        ("src/main.ts", "./a", ["src/a.ts"]),
        ("src/main.ts", "./a.js", ["src/a.ts"]),  # TypeScript ESM names the emitted file
        ("src/main.ts", "./b", ["src/b/index.tsx"]),
        ("src/x/main.js", "../c.js", ["src/c.js"]),
        ("src/main.ts", "./types", ["src/types.d.ts"]),
        ("src/main.ts", "@/lib/util", ["src/lib/util.mjs"]),
        ("src/main.ts", "react", []),
        ("src/main.ts", "./missing", []),
    ],
)
def test_javascript_family(importer: str, module: str, expected: list[str]) -> None:
    assert resolve("typescript", importer, module, JS) == expected


def test_go_packages_are_folders_and_the_stdlib_is_never_matched() -> None:
    files = {"go.mod", "internal/db/db.go", "internal/db/conn.go", "cmd/tool/main.go", "strings/x.txt"}
    project = project_index(frozenset(files))
    found = resolve_import("go", "cmd/tool/main.go", ImportRef("example.com/shop/internal/db", 1), project)
    assert [(t.path, t.kind) for t in found] == [("internal/db", DIRECTORY)]
    assert resolve("go", "cmd/tool/main.go", "strings", files) == []
    assert resolve("go", "cmd/tool/main.go", "github.com/lib/pq", files) == []


RS = {"src/main.rs", "src/net/mod.rs", "src/net/tcp.rs", "src/store.rs", "src/store/cache.rs"}


@pytest.mark.parametrize(
    ("importer", "module", "names", "expected"),
    [
        ("src/main.rs", "self::net", (), ["src/net/mod.rs"]),  # mod net;
        ("src/net/mod.rs", "self::tcp", (), ["src/net/tcp.rs"]),
        ("src/store.rs", "self::cache", (), ["src/store/cache.rs"]),  # non-mod.rs file: its own folder
        ("src/net/tcp.rs", "super::Listener", (), ["src/net/mod.rs"]),  # an item of the parent module
        ("src/net/tcp.rs", "crate::store::Store", (), ["src/store.rs"]),
        ("src/main.rs", "crate", ("net", "store"), ["src/net/mod.rs", "src/store.rs"]),
        ("src/main.rs", "std::collections::HashMap", (), []),
        ("src/main.rs", "serde::Serialize", (), []),
    ],
)
def test_rust(importer: str, module: str, names: tuple[str, ...], expected: list[str]) -> None:
    assert resolve("rust", importer, module, RS, names) == expected


def test_jvm_and_dotnet() -> None:
    java = {"src/main/java/com/a/db/Conn.java", "src/main/java/com/a/util/Helpers.java"}
    importer = "src/main/java/com/a/App.java"
    assert resolve("java", importer, "com.a.db.Conn", java) == ["src/main/java/com/a/db/Conn.java"]
    assert resolve("java", importer, "com.a.util.Helpers.help", java) == [
        "src/main/java/com/a/util/Helpers.java"
    ]
    assert resolve("java", importer, "com.a.db.*", java) == ["src/main/java/com/a/db"]
    assert resolve("java", importer, "java.util.List", java) == []
    cs = {"Shop/Data/Repo.cs", "Shop/Util/Helpers.cs"}
    assert resolve("csharp", "Shop/App.cs", "Shop.Data", cs) == ["Shop/Data"]
    assert resolve("csharp", "Shop/App.cs", "Acme.Shop.Util.Helpers", cs) == ["Shop/Util/Helpers.cs"]
    assert resolve("csharp", "Shop/App.cs", "System.Linq", cs) == []


def test_c_ruby_php() -> None:
    c = {"src/net/client.h", "include/lib/api.h", "src/util.h"}
    assert resolve("c", "src/net/client.c", "client.h", c) == ["src/net/client.h"]
    assert resolve("c", "src/main.c", "net/client.h", c) == ["src/net/client.h"]
    assert resolve("cpp", "src/main.cpp", "lib/api.h", c) == ["include/lib/api.h"]
    assert resolve("c", "src/main.c", "stdio.h", c) == []
    rb = {"lib/shop/store.rb", "lib/shop.rb", "app/models/user.rb"}
    assert resolve("ruby", "lib/shop.rb", "shop/store", rb) == ["lib/shop/store.rb"]
    assert resolve("ruby", "bin/run.rb", "shop", rb) == ["lib/shop.rb"]
    assert resolve("ruby", "app/models/order.rb", "user", rb) == ["app/models/user.rb"]  # require_relative
    assert resolve("ruby", "lib/shop.rb", "json", rb) == []
    php = {"src/Models/User.php", "src/helpers.php"}
    assert resolve("php", "src/index.php", "App\\Models\\User", php) == ["src/Models/User.php"]
    assert resolve("php", "src/index.php", "/helpers.php", php) == ["src/helpers.php"]
    assert resolve("php", "src/index.php", "Symfony\\Component\\Yaml", php) == []


def test_scala_lua_elixir_haskell_zig_bash() -> None:
    scala = {"src/main/scala/shop/db/Conn.scala", "src/main/scala/shop/util/Log.scala"}
    importer = "src/main/scala/shop/App.scala"
    assert resolve("scala", importer, "shop.db.Conn", scala) == ["src/main/scala/shop/db/Conn.scala"]
    assert resolve("scala", importer, "shop.util.*", scala) == ["src/main/scala/shop/util"]
    assert resolve("scala", importer, "scala.collection.mutable", scala) == []
    lua = {"lua/telescope/builtin/init.lua", "lua/telescope/utils.lua", "plugin/x.lua"}
    assert resolve("lua", "plugin/x.lua", "telescope.utils", lua) == ["lua/telescope/utils.lua"]
    assert resolve("lua", "plugin/x.lua", "telescope.builtin", lua) == ["lua/telescope/builtin/init.lua"]
    assert resolve("lua", "plugin/x.lua", "plenary.path", lua) == []
    ex = {"lib/plug/conn.ex", "lib/plug/html.ex", "lib/plug/conn/utils.ex", "test/test_helper.exs"}
    assert resolve("elixir", "lib/plug.ex", "Plug.Conn.Utils", ex) == ["lib/plug/conn/utils.ex"]
    assert resolve("elixir", "lib/plug.ex", "Plug.HTML", ex) == ["lib/plug/html.ex"]
    assert resolve("elixir", "lib/plug.ex", "Logger", ex | {"lib/x/logger.ex"}) == []
    assert resolve("elixir", "lib/plug.ex", ":crypto", ex) == []
    hs = {"src/Data/Aeson/Types.hs", "app/Main.hs"}
    assert resolve("haskell", "app/Main.hs", "Data.Aeson.Types", hs) == ["src/Data/Aeson/Types.hs"]
    assert resolve("haskell", "app/Main.hs", "Data.Map.Strict", hs) == []
    zig = {"src/zls.zig", "src/analysis.zig", "build.zig"}
    assert resolve("zig", "src/main.zig", "analysis.zig", zig) == ["src/analysis.zig"]
    assert resolve("zig", "tests/t.zig", "zls", zig) == ["src/zls.zig"]
    assert resolve("zig", "src/main.zig", "std", zig | {"src/std.zig"}) == []
    sh = {"libexec/bats-core/bats-exec-file", "lib/bats-core/common.bash", "nvm.sh", "test/common.sh"}
    assert resolve("bash", "test/t.sh", "$BATS_ROOT/lib/bats-core/common.bash", sh) == [
        "lib/bats-core/common.bash"
    ]
    assert resolve("bash", "test/t.sh", "${BASH_SOURCE%/*}/common.sh", sh) == ["test/common.sh"]
    assert resolve("bash", "test/t.sh", '$(dirname "$0")/../nvm.sh', sh) == ["nvm.sh"]
    assert resolve("bash", "test/t.sh", "$HOME/.nvm/$VERSION/x.sh", sh) == []


def test_targets_are_files_unless_packages() -> None:
    project = project_index(frozenset({"a.py", "b.py"}))
    assert [t.kind for t in resolve_import("python", "a.py", ImportRef("b", 1), project)] == [FILE]
    assert resolve_import("python", "a.py", ImportRef("", 1), project) == []
    assert resolve_import("markdown", "a.md", ImportRef("b", 1), project) == []
