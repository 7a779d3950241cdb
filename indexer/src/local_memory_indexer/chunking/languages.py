"""The chunker's view of the language data: every table lives in ``local_memory_shared.languages``.

``code.py`` holds the one generic walk; what is grammar-specific (definition node types, wrappers,
comments, bodies, names) is :class:`SyntaxSpec` data there, read through :func:`syntax_of`.
"""

from __future__ import annotations

from local_memory_shared.languages import (
    CONTAINER_KINDS,
    FUNCTION_KINDS,
    JS_CLASS_VALUES,
    JS_FUNCTION_VALUES,
    TYPE_KINDS,
    SyntaxSpec,
    modules_hold_methods,
    syntax_of,
)

__all__ = [
    "CONTAINER_KINDS",
    "FUNCTION_KINDS",
    "JS_CLASS_VALUES",
    "JS_FUNCTION_VALUES",
    "TYPE_KINDS",
    "SyntaxSpec",
    "modules_hold_methods",
    "syntax_of",
]
