; Local Memory tags for Lua. Capture convention: local_memory_indexer.graph.extract.
; `function M.f()` / `function M:f()` are methods of the table M (qualified M.f).

; --- definitions ---
(function_definition_statement
  name: (variable table: (_) @qualifier.definition.function [field: (_) method: (_)] @name.definition.function)) @definition.function
(function_definition_statement name: (identifier) @name.definition.function) @definition.function
(local_function_definition_statement name: (identifier) @name.definition.function) @definition.function
; `M.f = function() end`, `local f = function() end`
(variable_assignment
  (variable_list . (variable table: (_) @qualifier.definition.function field: (_) @name.definition.function) .)
  (expression_list . value: (function_definition) .)) @definition.function
(variable_assignment
  (variable_list . (variable name: (identifier) @name.definition.function) .)
  (expression_list . value: (function_definition) .)) @definition.function
(local_variable_declaration
  (variable_list . (variable name: (identifier) @name.definition.function) .)
  (expression_list . value: (function_definition) .)) @definition.function

; --- calls: `f()`, `t.f()`, `obj:m()` (require is an import) ---
(call function: (variable name: (identifier) @name.reference.call)) @reference.call
(call function: (variable [field: (identifier) method: (identifier)] @name.reference.call)) @reference.call

; --- dynamic calls: `t[k]()`, `t["name"]()` ---
(call function: (variable field: (string) @name.reference.dynamic_call)) @reference.dynamic_call
(call function: (variable field: (variable))) @reference.dynamic_call

; --- imports: `require("a.b")`, `require "a.b"` (tree-sitter-languages' Lua grammar misparses a
; file's very first statement `local x = f("a")` into an ERROR, which a pattern cannot reach inside) ---
(call
  function: (variable name: (identifier) @_fn (#eq? @_fn "require"))
  arguments: (argument_list . [(string) @name.reference.import (expression_list . (string) @name.reference.import)])) @reference.import
