"""Per-language node-type tables for the code chunker: which tree-sitter nodes are definitions, wrappers, comments.

Everything grammar-specific that can be data lives here; ``code.py`` holds the one generic walk.
Node-type names are those of the grammars bundled by tree-sitter-languages 1.10.2.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

#: chunk kinds whose node is a callable (the chunk is the whole definition, nested code included)
FUNCTION_KINDS = frozenset({"function", "method", "macro"})
#: chunk kinds that own methods: members become their own chunks, the container keeps a skeleton
TYPE_KINDS = frozenset({"class", "interface", "struct", "union", "enum", "impl", "trait", "object"})
#: ``namespace`` (Ruby ``module``, Rust inline ``mod``) qualifies names but only owns methods in Ruby
CONTAINER_KINDS = TYPE_KINDS | {"namespace"}

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

# a closing line such as ``}  // namespace net``: brackets first, then at most a comment
_BRACES_ONLY = re.compile(r"\s*([{}()\[\];,]+\s*(//.*|/\*.*\*/)?)?\s*")
_C_STRUCTURAL = re.compile(r"\s*([{}()\[\];,]+\s*(//.*|/\*.*\*/)?)?\s*|\s*#\s*(endif|else)\b.*")


@dataclass(frozen=True)
class LanguageSpec:
    """How to find definitions in one grammar's syntax tree."""

    #: node type → chunk kind of a definition node (functions become methods inside a type)
    definitions: Mapping[str, str]
    #: node type → how the definition sits inside it (see ``code._unwrap`` for the strategies)
    wrappers: Mapping[str, str] = field(default_factory=dict)
    #: nodes walked through when looking for definitions (namespaces, preprocessor blocks, member lists)
    transparent: frozenset[str] = frozenset()
    #: comment node types; a comment block directly above a definition belongs to its chunk
    comments: frozenset[str] = frozenset({"comment"})
    #: other line-leading nodes glued to the next definition (Rust attributes, JS member decorators)
    attachable: frozenset[str] = frozenset()
    #: definition node types that only count when they have a body (abstract methods, forward decls)
    requires_body: frozenset[str] = frozenset()
    #: body node types that start at the first statement rather than at a brace (so the header ends a row earlier)
    statement_bodies: frozenset[str] = frozenset()
    #: line-comment prefix used in the elision markers of class skeletons
    comment_prefix: str = "//"
    #: whether functions directly inside a ``namespace`` container are methods of it (Ruby modules)
    namespace_holds_methods: bool = False
    #: module-level gaps made only of such lines (closing braces, ``#endif``) are not worth a chunk
    structural_line: re.Pattern[str] = _BRACES_ONLY


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
}
# TS ``namespace X {}`` parses as expression_statement > internal_module > statement_block
_TS_TRANSPARENT = frozenset(
    {"expression_statement", "internal_module", "module", "statement_block", "ambient_declaration"}
)

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

SPECS: dict[str, LanguageSpec] = {
    "python": LanguageSpec(
        definitions={"function_definition": "function", "class_definition": "class"},
        wrappers={"decorated_definition": "definition"},
        statement_bodies=frozenset({"block"}),
        comment_prefix="#",
        structural_line=re.compile(r"\s*"),
    ),
    "javascript": LanguageSpec(
        definitions=_JS_DEFINITIONS,
        wrappers=_JS_WRAPPERS,
        attachable=frozenset({"decorator"}),
    ),
    "typescript": LanguageSpec(
        definitions=_TS_DEFINITIONS,
        wrappers=_JS_WRAPPERS,
        transparent=_TS_TRANSPARENT,
        attachable=frozenset({"decorator"}),
    ),
    "tsx": LanguageSpec(
        definitions=_TS_DEFINITIONS,
        wrappers=_JS_WRAPPERS,
        transparent=_TS_TRANSPARENT,
        attachable=frozenset({"decorator"}),
    ),
    "go": LanguageSpec(
        definitions={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_declaration": "type",
        },
        requires_body=frozenset({"function_declaration", "method_declaration"}),
    ),
    "rust": LanguageSpec(
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
    "java": LanguageSpec(
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
        comments=frozenset({"line_comment", "block_comment"}),
        requires_body=frozenset({"method_declaration"}),
    ),
    "c": LanguageSpec(
        definitions=_C_DEFINITIONS,
        wrappers=_C_WRAPPERS,
        transparent=_C_TRANSPARENT,
        requires_body=_C_REQUIRES_BODY,
        structural_line=_C_STRUCTURAL,
    ),
    "cpp": LanguageSpec(
        definitions={**_C_DEFINITIONS, "class_specifier": "class"},
        wrappers={**_C_WRAPPERS, "field_declaration": "type_specifier", "template_declaration": "template"},
        transparent=_C_TRANSPARENT | {"namespace_definition"},
        requires_body=_C_REQUIRES_BODY | {"class_specifier"},
        structural_line=_C_STRUCTURAL,
    ),
    "csharp": LanguageSpec(
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
    "ruby": LanguageSpec(
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
        namespace_holds_methods=True,
        structural_line=re.compile(r"\s*"),
    ),
    "php": LanguageSpec(
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
    "kotlin": LanguageSpec(
        definitions={
            "class_declaration": "class",
            "object_declaration": "object",
            "function_declaration": "function",
            "secondary_constructor": "function",
        },
        # companion members are called as ``Outer.member``: the companion only groups them
        transparent=frozenset({"companion_object", "class_body"}),
        comments=frozenset({"line_comment", "multiline_comment"}),
        requires_body=frozenset({"function_declaration"}),
    ),
}
