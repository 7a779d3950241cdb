"""Everything the project knows about each programming language, as data: the one owner of language facts.

One :class:`Language` per language tag says which file extensions it has, which tree-sitter grammar
parses it (the grammars bundled by tree-sitter-languages 1.10.2), how the chunker finds definitions
in its syntax tree (:class:`SyntaxSpec`), whether the graph extractor ships a tag query for it, and
how the searcher resolves its call sites (:class:`GraphPolicy`). The indexer's chunker and graph
extractor and the searcher's call resolver all read this module; none keeps a table of its own.

Pure data and pure functions only: no tree-sitter import, so a search-only install can read it.
Zig and Swift, which the bundle lacks, and Lua, whose bundled grammar misreads ``x = 1`` and can loop
for good on ``f(a)``, come from their own packages (``treesitter.SEPARATE_GRAMMARS``);
languages no loadable grammar parses (Dart, Clojure) are not listed: their files are line windows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# --- chunk kinds (the chunker's vocabulary) ------------------------------------------------------

#: chunk kinds whose node is a callable (the chunk is the whole definition, nested code included)
FUNCTION_KINDS = frozenset({"function", "method", "macro"})
#: chunk kinds that own methods: members become their own chunks, the container keeps a skeleton
TYPE_KINDS = frozenset({"class", "interface", "struct", "union", "enum", "impl", "trait", "object"})
#: ``namespace`` (Ruby/Elixir modules, Rust inline ``mod``) qualifies names; it owns methods only
#: where ``Language.modules_hold_methods`` says so
CONTAINER_KINDS = TYPE_KINDS | {"namespace"}

# --- symbol kinds (the graph's vocabulary: tag-query capture names) ------------------------------

#: symbol kinds whose nested functions are methods and whose names qualify what they contain
SYMBOL_CONTAINER_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "module"})
#: symbol kinds a call can land on (a call never runs an interface, trait, enum, type alias or
#: module; it does expand a C function-like macro or an Elixir ``defmacro``)
CALLABLE_KINDS = frozenset({"function", "method", "class", "struct", "macro"})
#: symbol kinds that are types (a receiver typed with one of them is the project's own)
SYMBOL_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type"})

#: receivers that mean "this object" in some language (Python ``self``, Ruby ``@x``, PHP ``$this``...)
SELF_RECEIVERS = frozenset({"self", "this", "cls", "Self", "$this", "static", "@"})
#: receivers that mean "the base class" (``super().x()``, PHP ``parent::x()``, C# ``base.x()``)
SUPER_RECEIVERS = frozenset({"super", "parent", "base"})

#: values that make ``const f = ...`` / ``x.f = ...`` / ``f = ...`` class fields a function definition
JS_FUNCTION_VALUES = frozenset(
    {
        "arrow_function",
        "function",
        "function_expression",
        "generator_function",
        "generator_function_expression",
    }
)
JS_CLASS_VALUES = frozenset({"class"})

#: A line that is one upper-case identifier of at least three characters and nothing else: a
#: macro used as a statement of its own (``ABSL_NAMESPACE_BEGIN``, ``G_BEGIN_DECLS``,
#: ``NS_ASSUME_NONNULL_BEGIN``). Code never ends a line so (a statement ends with ``;``, a
#: ``#define`` body line with ``\``); a last enumerator written without its comma is the one
#: exception, and reading it as blank leaves the enum whole.
_BARE_MACRO_LINE = re.compile(rb"^[ \t]*[A-Z_][A-Z0-9_]{2,}[ \t]*$", re.MULTILINE)

# a closing line such as ``}  // namespace net``: brackets first, then at most a comment
_BRACES_ONLY = re.compile(r"\s*([{}()\[\];,]+\s*(//.*|/\*.*\*/)?)?\s*")
_C_STRUCTURAL = re.compile(r"\s*([{}()\[\];,]+\s*(//.*|/\*.*\*/)?)?\s*|\s*#\s*(endif|else)\b.*")
_BLANK = re.compile(r"\s*")
_QUALIFIER_DEFAULT = re.compile(r"::|\\")


@dataclass(frozen=True)
class SyntaxSpec:
    """How the chunker finds definitions in one grammar's syntax tree (node types of that grammar)."""

    #: node type → chunk kind of a definition node (functions become methods inside a type)
    definitions: Mapping[str, str]
    #: node type → how the definition sits inside it (see ``chunking.code._unwrap`` for the strategies)
    wrappers: Mapping[str, str] = field(default_factory=dict)
    #: nodes walked through when looking for definitions (namespaces, preprocessor blocks, member lists)
    transparent: frozenset[str] = frozenset()
    #: comment node types; a comment block directly above a definition belongs to its chunk
    comments: frozenset[str] = frozenset({"comment"})
    #: other line-leading nodes glued to the next definition (Rust attributes, Haskell signatures)
    attachable: frozenset[str] = frozenset()
    #: definition node types that only count when they have a body (abstract methods, forward decls)
    requires_body: frozenset[str] = frozenset()
    #: body node types that start at the first statement rather than at a brace (so the header ends a row earlier)
    statement_bodies: frozenset[str] = frozenset()
    #: the field holding a definition's body (Haskell equations: ``rhs``)
    body_field: str = "body"
    #: body node types found by type where the grammar has no ``body`` field (Elixir ``do_block``)
    body_nodes: frozenset[str] = frozenset()
    #: definition node types whose members are their direct children (Haskell ``instance``)
    self_bodied: frozenset[str] = frozenset()
    #: node type → path to its name where it has no ``name`` field: each step a field or a child type
    #: (a named child first, else a keyword: Swift ``deinit`` is named by its keyword)
    name_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: keyword in a definition's ``kind_field`` → chunk kind, where one node type holds several kinds
    #: (Kotlin ``interface`` / ``enum class``; Swift ``struct`` / ``enum`` / ``extension``)
    kind_keywords: Mapping[str, str] = field(default_factory=dict)
    #: the field holding that keyword
    kind_field: str = "kind"
    #: macro-style definitions (Elixir ``def``/``defmodule`` are calls): call target word → chunk kind
    call_definitions: Mapping[str, str] = field(default_factory=dict)
    #: separators that split a written name into owner parts (``Foo::bar``; Lua ``M.f`` / ``M:f``)
    qualifier_split: re.Pattern[str] = _QUALIFIER_DEFAULT
    #: adjacent definitions of the same name are clauses of one (Haskell equations, Elixir clauses)
    joins_clauses: bool = False
    #: bodiless declarations (TypeScript overload signatures, each often under its own doc comment)
    #: that belong to the definition of the same name right after them: they join its chunk, and
    #: alone (an interface member, a ``declare``) they are not definitions of their own
    overloads: frozenset[str] = frozenset()
    #: line-comment prefix used in the elision markers of class skeletons
    comment_prefix: str = "//"
    #: module-level gaps made only of such lines (closing braces, ``#endif``) are not worth a chunk
    structural_line: re.Pattern[str] = _BRACES_ONLY


@dataclass(frozen=True)
class GraphPolicy:
    """How the searcher resolves one language's call sites to definitions."""

    #: a bare call needs a local definition or an import (no project-wide fallback)
    scoped: bool = False
    #: a bare call may reach a definition in the caller's package folder (Go, Java, Kotlin, C#)
    package_dirs: bool = False
    #: a bare call may be a method of the caller's class (an implicit ``this``)
    implicit_this: bool = False
    #: which methods a bare call may land on: ``none``, ``imported`` (static imports) or ``all`` (Ruby)
    bare_call_methods: str = "imported"
    #: methods of the language's own collections, strings and files: an untyped receiver calling one
    #: of these is far likelier a builtin than the project's class that happens to share the name
    builtin_methods: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Language:
    """One language: files, grammar, chunking syntax, graph extraction and call resolution."""

    name: str
    extensions: tuple[str, ...]
    #: tree-sitter-languages grammar name; None when no grammar parses it
    grammar: str | None = None
    #: how definitions are found; None when the language is not chunked from a syntax tree
    syntax: SyntaxSpec | None = None
    #: functions directly inside a ``module``/``namespace`` are its methods (Ruby, Elixir)
    modules_hold_methods: bool = False
    #: the graph extractor ships ``queries/<name>-tags.scm`` for it
    tags: bool = False
    #: a method call that constructs its receiver's class (Ruby ``Foo.new`` calls ``Foo``)
    constructor_call: str | None = None
    graph: GraphPolicy = GraphPolicy()
    #: lines the parser reads as blanks (same length, so every byte offset and line number holds):
    #: C / C++ lines holding nothing but a bare macro (``ABSL_NAMESPACE_BEGIN``), which tree-sitter,
    #: knowing no macro, reads as the return type of a function spanning the rest of the file
    masked_lines: re.Pattern[bytes] | None = None


_PYTHON_BUILTINS = frozenset(
    "append extend insert remove pop clear copy count index sort reverse get items keys values update "
    "setdefault popitem join split rsplit splitlines strip lstrip rstrip startswith endswith lower upper "
    "replace format format_map encode decode find rfind partition rpartition add discard union "
    "intersection difference issubset issuperset read readline readlines write writelines close flush "
    "seek tell fileno group groups groupdict match search sub fullmatch finditer findall isdigit isalpha "
    "isalnum isspace title capitalize zfill ljust rjust center casefold translate hex total_seconds "
    "isoformat strftime exists is_file is_dir mkdir unlink read_text write_text read_bytes write_bytes".split()
)
_JS_BUILTINS = frozenset(
    "push pop shift unshift slice splice map filter reduce forEach find findIndex some every includes "
    "indexOf join split replace replaceAll trim toLowerCase toUpperCase startsWith endsWith then catch "
    "finally get set has delete add keys values entries toString concat flat flatMap sort reverse fill "
    "apply call bind log error warn info debug stringify parse match matchAll test exec charAt "
    "substring substr padStart padEnd repeat at".split()
)

_SWIFT_BUILTINS = frozenset(
    "append insert remove removeAll removeFirst removeLast removeValue updateValue contains map filter "
    "reduce compactMap flatMap forEach sorted sort reversed joined split firstIndex lastIndex index "
    "starts hasPrefix hasSuffix lowercased uppercased trimmingCharacters replacingOccurrences components "
    "dropFirst dropLast prefix suffix enumerated merge merging union intersection subtracting formUnion "
    "isSubset distance max min first last".split()
)

_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "function",
}
_JS_WRAPPERS = {
    "export_statement": "declaration",
    "lexical_declaration": "function_value",
    "variable_declaration": "function_value",
    "expression_statement": "assignment",
    "field_definition": "field_value",
    "public_field_definition": "field_value",
}
_TS_DEFINITIONS = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "function_signature": "function",
    "method_signature": "function",
}
# TS ``namespace X {}`` parses as expression_statement > internal_module > statement_block
_TS_TRANSPARENT = frozenset(
    {"expression_statement", "internal_module", "module", "statement_block", "ambient_declaration"}
)
_JS_SYNTAX = SyntaxSpec(
    definitions=_JS_DEFINITIONS, wrappers=_JS_WRAPPERS, attachable=frozenset({"decorator"})
)
_TS_SYNTAX = SyntaxSpec(
    definitions=_TS_DEFINITIONS,
    wrappers=_JS_WRAPPERS,
    transparent=_TS_TRANSPARENT,
    attachable=frozenset({"decorator"}),
    overloads=frozenset({"function_signature", "method_signature"}),
)
_JS_GRAPH = GraphPolicy(scoped=True, builtin_methods=_JS_BUILTINS)

_C_DEFINITIONS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
}
_C_WRAPPERS = {"declaration": "type_specifier", "type_definition": "type_specifier"}
_C_TRANSPARENT = frozenset(
    {
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
        "declaration_list",
    }
)
_C_REQUIRES_BODY = frozenset({"function_definition", "struct_specifier", "union_specifier", "enum_specifier"})
_JVM_COMMENTS = frozenset({"line_comment", "block_comment"})

_LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        ("py", "pyi"),
        "python",
        SyntaxSpec(
            definitions={"function_definition": "function", "class_definition": "class"},
            wrappers={"decorated_definition": "definition"},
            statement_bodies=frozenset({"block"}),
            comment_prefix="#",
            structural_line=_BLANK,
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, bare_call_methods="none", builtin_methods=_PYTHON_BUILTINS),
    ),
    Language("javascript", ("js", "mjs", "cjs", "jsx"), "javascript", _JS_SYNTAX, tags=True, graph=_JS_GRAPH),
    Language("typescript", ("ts", "mts", "cts"), "typescript", _TS_SYNTAX, tags=True, graph=_JS_GRAPH),
    Language("tsx", ("tsx",), "tsx", _TS_SYNTAX, tags=True, graph=_JS_GRAPH),
    Language(
        "go",
        ("go",),
        "go",
        SyntaxSpec(
            definitions={
                "function_declaration": "function",
                "method_declaration": "method",
                "type_declaration": "type",
            },
            requires_body=frozenset({"function_declaration", "method_declaration"}),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, package_dirs=True),
    ),
    Language(
        "rust",
        ("rs",),
        "rust",
        SyntaxSpec(
            definitions={
                "function_item": "function",
                "impl_item": "impl",
                "trait_item": "trait",
                "struct_item": "struct",
                "enum_item": "enum",
                "union_item": "union",
                "mod_item": "namespace",
                "macro_definition": "macro",
            },
            comments=frozenset({"line_comment", "block_comment"}),
            attachable=frozenset({"attribute_item"}),
            requires_body=frozenset({"mod_item"}),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True),
    ),
    Language(
        "java",
        ("java",),
        "java",
        SyntaxSpec(
            definitions={
                "class_declaration": "class",
                "interface_declaration": "interface",
                "enum_declaration": "enum",
                "record_declaration": "class",
                "annotation_type_declaration": "interface",
                "method_declaration": "function",
                "constructor_declaration": "function",
                "compact_constructor_declaration": "function",
            },
            transparent=frozenset({"enum_body_declarations"}),
            comments=_JVM_COMMENTS,
            requires_body=frozenset({"method_declaration"}),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, package_dirs=True, implicit_this=True),
    ),
    Language(
        "c",
        ("c", "h"),
        "c",
        SyntaxSpec(
            definitions=_C_DEFINITIONS,
            wrappers=_C_WRAPPERS,
            transparent=_C_TRANSPARENT,
            requires_body=_C_REQUIRES_BODY,
            structural_line=_C_STRUCTURAL,
        ),
        tags=True,
        masked_lines=_BARE_MACRO_LINE,
    ),
    Language(
        "cpp",
        ("cc", "cpp", "cxx", "hpp", "hh", "hxx"),
        "cpp",
        SyntaxSpec(
            definitions={**_C_DEFINITIONS, "class_specifier": "class"},
            wrappers={
                **_C_WRAPPERS,
                "field_declaration": "type_specifier",
                "template_declaration": "template",
            },
            transparent=_C_TRANSPARENT | {"namespace_definition"},
            requires_body=_C_REQUIRES_BODY | {"class_specifier"},
            structural_line=_C_STRUCTURAL,
        ),
        tags=True,
        masked_lines=_BARE_MACRO_LINE,
        graph=GraphPolicy(implicit_this=True),
    ),
    Language(
        "csharp",
        ("cs",),
        "c_sharp",
        SyntaxSpec(
            definitions={
                "class_declaration": "class",
                "struct_declaration": "struct",
                "interface_declaration": "interface",
                "enum_declaration": "enum",
                "record_declaration": "class",
                "record_struct_declaration": "struct",
                "method_declaration": "function",
                "constructor_declaration": "function",
                "destructor_declaration": "function",
                "operator_declaration": "function",
                "conversion_operator_declaration": "function",
            },
            transparent=frozenset(
                {"namespace_declaration", "file_scoped_namespace_declaration", "declaration_list"}
            ),
            requires_body=frozenset(
                {"method_declaration", "operator_declaration", "conversion_operator_declaration"}
            ),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, package_dirs=True, implicit_this=True),
    ),
    Language(
        "ruby",
        ("rb", "rake", "gemspec"),
        "ruby",
        SyntaxSpec(
            definitions={
                "class": "class",
                "module": "namespace",
                "method": "function",
                "singleton_method": "function",
            },
            # ``class << self`` only changes the receiver: its methods still belong to the class
            transparent=frozenset({"singleton_class", "body_statement"}),
            statement_bodies=frozenset({"body_statement"}),
            comment_prefix="#",
            structural_line=_BLANK,
        ),
        modules_hold_methods=True,
        tags=True,
        constructor_call="new",
        graph=GraphPolicy(implicit_this=True, bare_call_methods="all"),
    ),
    Language(
        "php",
        ("php",),
        "php",
        SyntaxSpec(
            definitions={
                "class_declaration": "class",
                "interface_declaration": "interface",
                "trait_declaration": "trait",
                "enum_declaration": "enum",
                "method_declaration": "function",
                "function_definition": "function",
            },
            transparent=frozenset({"namespace_definition", "compound_statement"}),
            requires_body=frozenset({"method_declaration"}),
        ),
        tags=True,
    ),
    Language(
        "kotlin",
        ("kt", "kts"),
        "kotlin",
        SyntaxSpec(
            definitions={
                "class_declaration": "class",
                "object_declaration": "object",
                "function_declaration": "function",
                "secondary_constructor": "function",
            },
            kind_keywords={"interface": "interface", "enum": "enum"},
            # companion members are called as ``Outer.member``: the companion only groups them
            transparent=frozenset({"companion_object", "class_body"}),
            comments=frozenset({"line_comment", "multiline_comment"}),
            requires_body=frozenset({"function_declaration"}),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, package_dirs=True, implicit_this=True),
    ),
    Language(
        "scala",
        ("scala", "sc"),
        "scala",
        SyntaxSpec(
            definitions={
                "class_definition": "class",
                "object_definition": "object",
                "trait_definition": "trait",
                "enum_definition": "enum",
                "function_definition": "function",
            },
            comments=frozenset({"comment", "block_comment"}),
            attachable=frozenset({"annotation"}),
        ),
        tags=True,
        graph=GraphPolicy(scoped=True, package_dirs=True, implicit_this=True),
    ),
    Language(
        "elixir",
        ("ex", "exs"),
        "elixir",
        SyntaxSpec(
            definitions={},
            wrappers={"call": "call_definition"},
            # ``@doc``/``@spec`` lines above a ``def`` document it
            attachable=frozenset({"unary_operator"}),
            body_nodes=frozenset({"do_block"}),
            call_definitions={
                "defmodule": "namespace",
                "defprotocol": "interface",
                "defimpl": "impl",
                "def": "function",
                "defp": "function",
                "defmacro": "macro",
                "defmacrop": "macro",
                "defguard": "function",
                "defguardp": "function",
                "defdelegate": "function",
            },
            joins_clauses=True,
            comment_prefix="#",
            structural_line=_BLANK,
        ),
        modules_hold_methods=True,
        tags=True,
        graph=GraphPolicy(scoped=True, implicit_this=True, bare_call_methods="all"),
    ),
    Language(
        "haskell",
        ("hs",),
        "haskell",
        SyntaxSpec(
            definitions={
                "function": "function",
                "bind": "function",
                "adt": "type",
                "newtype": "type",
                "type_alias": "type",
                "class": "interface",
                "instance": "impl",
            },
            # a type signature sits on the lines above its equations
            attachable=frozenset({"signature"}),
            body_field="rhs",
            body_nodes=frozenset({"class_body"}),
            self_bodied=frozenset({"instance"}),
            name_paths={"class": ("class_head", "class"), "instance": ("instance_head", "class")},
            joins_clauses=True,
            comment_prefix="--",
            structural_line=_BLANK,
        ),
        tags=True,
        # every call is bare, class methods included; a name comes from this module or an import
        graph=GraphPolicy(scoped=True, bare_call_methods="all"),
    ),
    Language(
        "lua",
        ("lua",),
        "lua",
        SyntaxSpec(
            # tree-sitter-lua 0.2.0 (``treesitter.SEPARATE_GRAMMARS``): ``function M.f()``,
            # ``function M:f()``, ``local function f()`` are all ``function_declaration``
            definitions={"function_declaration": "function"},
            # ``M.f = function() end`` and ``local f = function() end`` define ``M.f`` and ``f``
            wrappers={"assignment_statement": "lua_assignment", "variable_declaration": "lua_assignment"},
            statement_bodies=frozenset({"block"}),
            qualifier_split=re.compile(r"[.:]"),
            comment_prefix="--",
            structural_line=_BLANK,
        ),
        tags=True,
    ),
    Language(
        "bash",
        ("sh", "bash"),
        "bash",
        SyntaxSpec(
            definitions={"function_definition": "function"},
            comment_prefix="#",
            structural_line=_BLANK,
        ),
        tags=True,
    ),
    Language(
        "zig",
        ("zig",),
        "zig",
        SyntaxSpec(
            definitions={
                "function_declaration": "function",
                "struct_declaration": "struct",
                "enum_declaration": "enum",
                "union_declaration": "type",
                "opaque_declaration": "type",
            },
            # a container is a value: ``const Client = struct { ... };`` names it
            wrappers={"variable_declaration": "container_value"},
            # a container's fields and functions are its direct children
            self_bodied=frozenset({"struct_declaration", "enum_declaration", "union_declaration"}),
            structural_line=_BRACES_ONLY,
        ),
        tags=True,
        # a bare name is declared in the file or reached through an @import
        graph=GraphPolicy(scoped=True),
    ),
    Language(
        "swift",
        ("swift",),
        "swift",
        SyntaxSpec(
            definitions={
                "class_declaration": "class",
                "protocol_declaration": "interface",
                "function_declaration": "function",
                "init_declaration": "function",
                "deinit_declaration": "function",
            },
            # one node type for class, struct, enum, actor and extension, told apart by the keyword;
            # an extension adds members to a type declared elsewhere, as a Rust ``impl`` does
            kind_keywords={"struct": "struct", "enum": "enum", "extension": "impl"},
            kind_field="declaration_kind",
            comments=frozenset({"comment", "multiline_comment"}),
            # a protocol's requirements have no body (and are other node types): not definitions
            requires_body=frozenset({"function_declaration", "init_declaration"}),
            name_paths={"deinit_declaration": ("deinit",)},
            # ``extension Outer.Inner``; an operator's dots (``..<``) are its name, not qualifiers
            qualifier_split=re.compile(r"\.(?=[A-Za-z_])"),
            # ``#else`` / ``#endif`` of conditional compilation close a block as C's do
            structural_line=_C_STRUCTURAL,
        ),
        tags=True,
        # a module's declarations are visible in all its files, with no import naming the file:
        # a bare call looks in the caller's folder, then project-wide (imports name whole modules)
        graph=GraphPolicy(package_dirs=True, implicit_this=True, builtin_methods=_SWIFT_BUILTINS),
    ),
    Language("markdown", ("md", "markdown"), "markdown"),
)

#: language tag → its description
LANGUAGES: Mapping[str, Language] = MappingProxyType({lang.name: lang for lang in _LANGUAGES})
#: file extension (lower case, no dot) → language tag
EXTENSION_LANGUAGE: Mapping[str, str] = MappingProxyType(
    {ext: lang.name for lang in _LANGUAGES for ext in lang.extensions}
)
#: language tag → tree-sitter-languages grammar name
GRAMMAR: Mapping[str, str] = MappingProxyType(
    {lang.name: lang.grammar for lang in _LANGUAGES if lang.grammar is not None}
)
#: languages whose definitions are chunked from a syntax tree
CODE_LANGUAGES = frozenset(lang.name for lang in _LANGUAGES if lang.syntax is not None)
#: languages the graph extractor has a tag query for
GRAPH_LANGUAGES = frozenset(lang.name for lang in _LANGUAGES if lang.tags)
_NO_POLICY = GraphPolicy()


def masked_for_parse(language: str, source: bytes) -> bytes:
    """``source`` as the parser should read it: ``Language.masked_lines`` blanked (same length)."""
    found = LANGUAGES.get(language)
    pattern = found.masked_lines if found is not None else None
    if pattern is None or pattern.search(source) is None:
        return source
    return pattern.sub(lambda m: b" " * len(m.group(0)), source)


#: Files whose name, not their suffix, says their language.
FILE_NAME_LANGUAGE: Mapping[str, str] = MappingProxyType(
    dict.fromkeys(("Rakefile", "Gemfile", "Guardfile", "Vagrantfile", "Podfile", "Fastfile"), "ruby")
)
#: ``#!`` interpreters (the program's base name, after ``env`` and its options) → language tag.
SHEBANG_LANGUAGE: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(("sh", "bash", "dash", "ksh"), "bash"),
        **dict.fromkeys(("python", "python2", "python3"), "python"),
        "ruby": "ruby",
        **dict.fromkeys(("node", "nodejs"), "javascript"),
        "lua": "lua",
    }
)
_SHEBANG = re.compile(rb"#![ \t]*(\S+)([^\n]*)")


def _name_and_suffix(path: str) -> tuple[str, str]:
    """The file name and its lower-cased suffix without the dot: ``PurePosixPath(path).suffix``
    without building a path (a walk asks this of every file): the text after the name's last dot,
    none for a leading-dot name (``.bashrc``) or a trailing dot."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name, name[dot + 1 :].lower() if 0 < dot < len(name) - 1 else ""


def language_for_path(path: str) -> str:
    """Language tag for a repo-relative path; 'text' when we have no grammar."""
    return _language_of(*_name_and_suffix(path))


def _language_of(name: str, suffix: str) -> str:
    """:func:`language_for_path` from the name and suffix :func:`_name_and_suffix` read."""
    if suffix:
        return EXTENSION_LANGUAGE.get(suffix, "text")
    return FILE_NAME_LANGUAGE.get(name, "text")


def shebang_language(data: bytes) -> str | None:
    """The language a ``#!`` first line names (``#!/bin/sh``, ``#!/usr/bin/env -S python3 -u``)."""
    found = _SHEBANG.match(data)
    if found is None:
        return None
    program = found.group(1).rsplit(b"/", 1)[-1]
    if program == b"env":  # the program is env's first argument that is no option or assignment
        program = next((w for w in found.group(2).split() if not w.startswith(b"-") and b"=" not in w), b"")
    name = program.decode("ascii", "replace")
    return SHEBANG_LANGUAGE.get(name) or SHEBANG_LANGUAGE.get(name.rstrip("0123456789."))  # python3.11


#: A ``.h`` file is C by its suffix; C++ projects write their headers with the same suffix
#: (abseil, Chromium, LLVM). One of these lines in its first ``_SNIFF_BYTES`` makes it C++: a
#: namespace, a template, an access specifier, a ``using`` declaration, a class, an extensionless
#: standard header, or a ``std::`` name. C headers never have them (curl's 178 headers: none, its
#: ``extern "C"`` guard is no marker); abseil's 380: 362 (the rest are macro-only headers, which
#: the C grammar reads as well).
_CPP_HEADER = re.compile(
    rb"""^[ \t]*(?:
          namespace(?:[ \t]+[\w:]+)?[ \t]*\{
        | template[ \t]*<
        | (?:public|private|protected)[ \t]*:
        | using[ \t]+(?:namespace[ \t]+)?[\w:]+[ \t]*[;=]
        | class[ \t]+\w+[^;\n]*$
        | \#[ \t]*include[ \t]*<\w+>
        )|\bstd::\w""",
    re.MULTILINE | re.VERBOSE,
)
_SNIFF_BYTES = 65536


def language_for_source(path: str, data: bytes) -> str:
    """Language tag for a file whose content is at hand: :func:`language_for_path`, except that a
    ``.h`` header written in C++ (``_CPP_HEADER``) is ``cpp``, so the C++ grammar chunks its
    classes, templates and namespaces and its ``using`` aliases reach the symbol table, and a
    script without a suffix is in the language its ``#!`` line names (``SHEBANG_LANGUAGE``:
    ``bin/deploy`` starting ``#!/usr/bin/env bash`` is Bash)."""
    name, suffix = _name_and_suffix(path)
    language = _language_of(name, suffix)
    if suffix == "h" and language == "c" and _CPP_HEADER.search(data, 0, _SNIFF_BYTES):
        return "cpp"
    if not suffix and language == "text" and data.startswith(b"#!"):
        return shebang_language(data) or language
    return language


def suffixes_of(*languages: str) -> tuple[str, ...]:
    """File suffixes (with the dot) of ``languages``, in order: ``suffixes_of("kotlin")`` → ``(".kt", ".kts")``."""
    return tuple(f".{ext}" for name in languages for ext in LANGUAGES[name].extensions)


def syntax_of(language: str) -> SyntaxSpec:
    """The chunking syntax of ``language`` (KeyError when it is not chunked from a tree)."""
    syntax = LANGUAGES[language].syntax
    if syntax is None:
        raise KeyError(language)
    return syntax


def graph_policy(language: str | None) -> GraphPolicy:
    """How calls of ``language`` resolve (a permissive default for unknown languages)."""
    found = LANGUAGES.get(language or "")
    return found.graph if found is not None else _NO_POLICY


def modules_hold_methods(language: str) -> bool:
    """Whether functions directly inside a module/namespace of ``language`` are its methods."""
    found = LANGUAGES.get(language)
    return found is not None and found.modules_hold_methods
