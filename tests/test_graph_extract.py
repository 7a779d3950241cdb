"""Graph extraction from real tree-sitter parses: nesting, attribution, dynamic calls, receiver types, robustness."""

from __future__ import annotations

import re
import textwrap
from importlib import resources

import pytest
from local_memory_indexer.graph import CallSite, ImportRef, extract_file_graph, supported_languages
from local_memory_indexer.graph.extract import _INHERITS, DYNAMIC_CALLEE, MODULE_CALLER, query_source


def extract(language: str, text: str, path: str = "x"):
    return extract_file_graph(path, textwrap.dedent(text).lstrip("\n").encode(), language)


def qualified(graph) -> list[tuple[str, str, int, int]]:
    return [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in graph.symbols]


def test_python_nesting_spans_and_attribution() -> None:
    graph = extract(
        "python",
        """
        import os

        class Outer:
            class Inner:
                def ping(self):
                    return pong()

            def run(self):
                def helper():
                    return os.path.join("a", "b")
                return helper()

        def pong():
            pass

        pong()
        """,
    )
    assert qualified(graph) == [
        ("Outer", "class", 3, 11),
        ("Outer.Inner", "class", 4, 6),
        ("Outer.Inner.ping", "method", 5, 6),
        ("Outer.run", "method", 8, 11),
        ("Outer.run.helper", "function", 9, 10),
        ("pong", "function", 13, 14),
    ]
    assert graph.calls == (
        CallSite("Outer.Inner.ping", "pong", "pong", 6),
        CallSite("Outer.run.helper", "join", "os.path.join", 10),
        CallSite("Outer.run", "helper", "helper", 11),
        CallSite(MODULE_CALLER, "pong", "pong", 16),
    )
    assert graph.imports == (ImportRef("os", 1),)


def test_receiver_qualifiers_go_rust_cpp_kotlin() -> None:
    go = extract("go", "package m\nfunc (s *Server) Start() {}\nfunc (Server) Stop() {}\n")
    assert [(s.qualified_name, s.kind) for s in go.symbols] == [
        ("Server.Start", "method"),
        ("Server.Stop", "method"),
    ]
    rust = extract(
        "rust", "impl<T> Pool<T> { fn get(&self) {} }\nimpl Drop for Conn { fn drop(&mut self) {} }\n"
    )
    assert [(s.qualified_name, s.kind) for s in rust.symbols] == [
        ("Pool.get", "method"),
        ("Conn.drop", "method"),
    ]
    cpp = extract("cpp", "void Client::flush() {}\nClient::~Client() {}\nint free_fn() { return 0; }\n")
    assert [(s.qualified_name, s.kind) for s in cpp.symbols] == [
        ("Client.flush", "method"),
        ("Client.~Client", "method"),
        ("free_fn", "function"),
    ]
    kotlin = extract(
        "kotlin", "class A {\n  companion object {\n    fun make() = A()\n  }\n}\nfun String.shout() = this\n"
    )
    assert [(s.qualified_name, s.kind) for s in kotlin.symbols] == [
        ("A", "class"),
        ("A.make", "method"),
        ("String.shout", "method"),
    ]


def test_swift_keyword_kinds_extensions_and_lifecycle() -> None:
    swift = extract(
        "swift",
        """
        actor Worker {
            init() {}
            deinit { stop() }
            func stop() {}
        }
        enum Mode { case fast }
        extension Outer.Inner {
            func ping() {}
        }
        protocol Api {
            func call()
        }
        """,
    )
    assert [(s.qualified_name, s.kind) for s in swift.symbols] == [
        ("Worker", "class"),
        ("Worker.init", "method"),
        ("Worker.deinit", "method"),
        ("Worker.stop", "method"),
        ("Mode", "enum"),
        ("Outer.Inner.ping", "method"),
        ("Api", "interface"),
    ]
    assert [(c.caller_qualified, c.callee_name) for c in swift.calls] == [("Worker.deinit", "stop")]


def test_declarations_without_body_are_not_definitions() -> None:
    java = extract(
        "java", "interface Api { void call(); }\nabstract class B { abstract void run(); void ok() {} }\n"
    )
    assert [s.qualified_name for s in java.symbols] == ["Api", "B", "B.ok"]
    ts = extract("typescript", "interface I { m(): void }\ndeclare function f(x: number): void;\n")
    assert [s.qualified_name for s in ts.symbols] == ["I"]
    c = extract("c", "int proto(int a);\nint real(int a) { return a; }\n")
    assert [s.qualified_name for s in c.symbols] == ["real"]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        (
            "python",
            """
            def f(obj, key, handlers):
                getattr(obj, "save")()
                getattr(obj, key)()
                handlers["load"]()
                handlers[key]()
            """,
            [("save", 2), (DYNAMIC_CALLEE, 3), ("load", 4), (DYNAMIC_CALLEE, 5)],
        ),
        ("javascript", "function f(o, k) { o['save'](); o[k](); }", [("save", 1), (DYNAMIC_CALLEE, 1)]),
        (
            "ruby",
            "def f(o)\n  o.send(:save, 1)\n  o.public_send(name)\nend\n",
            [("save", 2), (DYNAMIC_CALLEE, 3)],
        ),
        (
            "php",
            "<?php\nfunction f($o, $m) { $o->$m(); call_user_func('save'); }\n",
            [(DYNAMIC_CALLEE, 2), ("save", 2)],
        ),
        (
            "java",
            'class A { void f() throws Exception { A.class.getMethod("save").invoke(this); } }',
            [("save", 1)],
        ),
        ("elixir", "defmodule M do\n  def f(m), do: apply(m, :save, [])\nend\n", [("save", 2)]),
        ("lua", '-- m\nlocal function f(t, k) t["save"](); t[k]() end\n', [("save", 2), (DYNAMIC_CALLEE, 2)]),
        ("zig", 'fn f() void { @call(.auto, save, .{}); @field(x, "load")(); }', [("save", 1), ("load", 1)]),
        ("bash", 'f() { "$handler" x; eval "$cmd"; }\n', [(DYNAMIC_CALLEE, 1), (DYNAMIC_CALLEE, 1)]),
    ],
)
def test_dynamic_calls_are_recorded_as_such(
    language: str, text: str, expected: list[tuple[str, int]]
) -> None:
    graph = extract(language, text)
    dynamic = sorted((c.callee_name, c.line) for c in graph.calls if c.dynamic)
    assert dynamic == sorted(expected)
    # a dynamic call site is not also a static call of send/getattr/call_user_func
    assert not any(
        c.callee_name in {"send", "public_send", "call_user_func"} for c in graph.calls if not c.dynamic
    )


@pytest.mark.parametrize(
    ("language", "text", "receiver", "expected"),
    [
        ("python", "def f(c: Client):\n    c.send()\n", "c.send", "Client"),
        ("python", "def f():\n    x = Pool()\n    x.get()\n", "x.get", "Pool"),
        (
            "python",
            "class A:\n    def __init__(self):\n        self.db = Db()\n    def run(self):\n        self.db.query()\n",
            "self.db.query",
            "Db",
        ),
        ("typescript", "function f() { const s = new Store(); s.save(); }", "s.save", "Store"),
        ("go", "package m\nfunc (s *Server) Run() { s.stop() }\n", "s.stop", "Server"),
        ("rust", "fn f() { let p = Pool::new(); p.get(); }", "p.get", "Pool"),
        ("java", "class A { Db db; void f() { db.query(); } }", "db.query", "Db"),
        ("csharp", "class A { void F() { var s = new Store(); s.Save(); } }", "s.Save", "Store"),
        ("kotlin", "class A(val db: Db) { fun f() { db.query() } }", "db.query", "Db"),
        (
            "php",
            "<?php\nclass A { private Db $db; function f() { $this->db->query(); } }\n",
            "$this->db->query",
            "Db",
        ),
        (
            "ruby",
            "class A\n  def initialize\n    @db = Db.new\n  end\n  def f\n    @db.query\n  end\nend\n",
            "@db.query",
            "Db",
        ),
        ("cpp", "void f(Store& s) { s.save(); }", "s.save", "Store"),
        ("scala", "def f(c: Conn): Unit = c.send()", "c.send", "Conn"),
        ("scala", "def f(): Unit = { val c = new Conn(); c.send() }", "c.send", "Conn"),
        ("zig", "fn f(s: *Store) void { s.save(); }", "s.save", "Store"),
        ("swift", "func f(c: Conn) { c.send() }", "c.send", "Conn"),
        ("swift", "func f() { let c = Conn(); c.send() }", "c.send", "Conn"),
        ("swift", "class A {\n  let db: Db\n  func f() { db.query() }\n}\n", "db.query", "Db"),
    ],
)
def test_receiver_types_come_from_declarations(
    language: str, text: str, receiver: str, expected: str
) -> None:
    graph = extract(language, text)
    typed = {c.callee_text: c.receiver_type for c in graph.calls}
    assert typed[receiver] == expected


def test_lowercase_factories_do_not_type_a_receiver() -> None:
    graph = extract("python", "def f():\n    x = make()\n    x.go()\n")
    assert {c.callee_text: c.receiver_type for c in graph.calls}["x.go"] is None


def test_callee_text_is_the_whole_callee_expression() -> None:
    graph = extract("javascript", "function f() { this.client\n  .send(1); new api.Client(); }")
    assert {(c.callee_name, c.callee_text) for c in graph.calls} == {
        ("send", "this.client.send"),
        ("Client", "api.Client"),
    }


def test_imports_split_and_normalise() -> None:
    py = extract("python", "from . import a, b as c\nfrom ..pkg import x as y, z\nimport m.n as o, p\n")
    assert py.imports == (
        ImportRef(".a", 1),
        ImportRef(".b", 1, ("* as c",)),
        ImportRef("..pkg", 2, ("x as y", "z")),
        ImportRef("m.n", 3, ("* as o",)),
        ImportRef("p", 3),
    )
    js = extract(
        "javascript",
        "import R, { a as b, c } from './x';\nimport * as ns from 'y';\nexport { d } from './z';\n",
    )
    assert js.imports == (
        ImportRef("./x", 1, ("default as R", "a as b", "c")),
        ImportRef("y", 2, ("* as ns",)),
        ImportRef("./z", 3, ("d",)),
    )
    rust = extract("rust", "mod db;\nuse crate::{db, net::Client as C};\nuse super::x::*;\n")
    assert rust.imports == (
        ImportRef("self::db", 1),
        ImportRef("crate", 2, ("db", "net::Client")),
        ImportRef("super::x", 3),
    )
    php = extract("php", "<?php\nuse App\\Services\\{Mailer, Logger as L};\n")
    assert php.imports == (ImportRef("App\\Services\\Logger", 2), ImportRef("App\\Services\\Mailer", 2))
    java = extract("java", "import static a.b.C.d;\nimport a.b.*;\n")
    assert java.imports == (ImportRef("a.b.C.d", 1), ImportRef("a.b.*", 2))
    scala = extract("scala", "import a.b.{C, D => E, F => _}, g._\nimport h.{I as J, *}\n")
    assert scala.imports == (
        ImportRef("a.b.C", 1),
        ImportRef("a.b.D", 1, ("D as E",)),
        ImportRef("g.*", 1),
        ImportRef("h.*", 2),
        ImportRef("h.I", 2, ("I as J",)),
    )
    elixir = extract("elixir", "defmodule M do\n  alias Shop.{Store, Util}\n  import Ecto.Query\nend\n")
    assert elixir.imports == (
        ImportRef("Shop.Store", 2),
        ImportRef("Shop.Util", 2),
        ImportRef("Ecto.Query", 3),
    )
    haskell = extract("haskell", "import qualified Data.Map as M\nimport Data.List (sort)\n")
    assert haskell.imports == (ImportRef("Data.Map", 1, ("* as M",)), ImportRef("Data.List", 2))
    lua = extract("lua", '-- m\nlocal a = require("x.y")\nlocal b = require "z"\n')
    assert lua.imports == (ImportRef("x.y", 2), ImportRef("z", 3))
    bash = extract("bash", 'source ./lib/a.sh\n. "$DIR/b.sh"\n')
    assert bash.imports == (ImportRef("./lib/a.sh", 1), ImportRef("$DIR/b.sh", 2))


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        (
            "haskell",
            "f :: Int -> Int\nf 0 = 1\nf n = n * f (n - 1)\n\ng = f 2\n",
            [("f", "function", 2, 3), ("g", "function", 5, 5)],
        ),
        (
            "elixir",
            "defmodule M do\n  def f(0), do: 1\n  def f(n), do: n * f(n - 1)\n  def g, do: f(2)\nend\n",
            [("M", "module", 1, 5), ("M.f", "method", 2, 3), ("M.g", "method", 4, 4)],
        ),
    ],
)
def test_clauses_of_one_function_are_one_definition(
    language: str, text: str, expected: list[tuple[str, str, int, int]]
) -> None:
    graph = extract(language, text)
    assert qualified(graph) == expected
    # the definition head `def f(n)` is not a call of f; the recursive call in its body is
    assert [(c.caller_qualified, c.callee_name) for c in graph.calls if c.callee_name == "f"] == [
        (expected[-2][0], "f"),
        (expected[-1][0], "f"),
    ]


def test_lua_method_calls_name_their_receiver() -> None:
    graph = extract("lua", "-- m\nfunction M:run() self:stop(); M.log(1) end\n")
    assert qualified(graph) == [("M.run", "method", 2, 2)]
    assert {(c.callee_name, c.callee_text) for c in graph.calls} == {("stop", "self.stop"), ("log", "M.log")}


@pytest.mark.parametrize("language", sorted(supported_languages()))
def test_broken_source_never_raises_and_keeps_what_parses(language: str) -> None:
    good = {
        "python": "def good():\n    pass\n",
        "javascript": "function good() {}\n",
        "typescript": "function good(): void {}\n",
        "tsx": "function good() { return <A/>; }\n",
        "go": "package m\nfunc good() {}\n",
        "rust": "fn good() {}\n",
        "java": "class good { }\n",
        "c": "int good(void) { return 0; }\n",
        "cpp": "int good() { return 0; }\n",
        "csharp": "class good { }\n",
        "ruby": "def good\nend\n",
        "php": "<?php\nfunction good() {}\n",
        "kotlin": "fun good() {}\n",
        "scala": "def good(): Unit = ()\n",
        "elixir": "defmodule M do\n  def good, do: 1\nend\n",
        "haskell": "good = 1\n",
        "lua": "function good() end\n",
        "zig": "fn good() void {}\n",
        "bash": "good() { :; }\n",
        "swift": "func good() {}\n",
    }[language]
    broken = good + "\n}}} ((( def class fn func @@ \x00\xff\xfe garbage <<<\n"
    graph = extract_file_graph(
        "broken", broken.encode("utf-8", errors="surrogateescape") + b"\xff\xfe", language
    )
    assert "good" in {s.name for s in graph.symbols}


def test_languages_without_tags_give_an_empty_graph() -> None:
    assert extract_file_graph("README.md", b"# Title\n\ncall(me)\n", "markdown").symbols == ()
    assert extract_file_graph("notes.txt", b"def f(): pass", "text").calls == ()


def test_query_files_follow_the_capture_convention() -> None:
    allowed = re.compile(
        r"^(definition|name\.definition|qualifier\.definition)\.[a-z]+$"
        r"|^(scope|name\.scope|reference\.call|name\.reference\.call|reference\.dynamic_call"
        r"|name\.reference\.dynamic_call|reference\.import|name\.reference\.import|imported\.reference\.import"
        r"|prefix\.reference\.import|alias\.reference\.import|default\.reference\.import|name\.local|type\.local)$"
        r"|^_"
    )
    root = resources.files("local_memory_indexer.graph").joinpath("queries")
    files = sorted(entry.name for entry in root.iterdir())
    # One file per language, plus shared parts a language inherits (`; inherits: c_preprocessor`).
    inherited = {
        f"{parent}-tags.scm"
        for lang in supported_languages()
        for parent in _INHERITS.findall(query_source(lang))
    }
    assert files == sorted({f"{lang}-tags.scm" for lang in supported_languages()} | inherited)
    for language in supported_languages():
        patterns = "\n".join(
            line for line in query_source(language).splitlines() if not line.lstrip().startswith(";")
        )
        # string literals of predicates may hold an `@` (Zig's "@import")
        captures = set(re.findall(r"@([\w.]+)", re.sub(r'"(?:[^"\\]|\\.)*"', '""', patterns)))
        assert captures, language
        assert {c for c in captures if not allowed.match(c)} == set(), language
        assert any(c.startswith("name.definition.") for c in captures), language
        assert "name.reference.call" in captures and "name.reference.import" in captures, language
