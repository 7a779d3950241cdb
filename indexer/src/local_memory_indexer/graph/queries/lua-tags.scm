; Local Memory tags for Lua (tree-sitter-lua 0.2.0). Capture convention: local_memory_indexer.graph.extract.
; `function M.f()` / `function M:f()` are methods of the table M (qualified M.f).

; --- definitions ---
(function_declaration
  name: (dot_index_expression table: (_) @qualifier.definition.function field: (identifier) @name.definition.function)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @qualifier.definition.function method: (identifier) @name.definition.function)) @definition.function
(function_declaration name: (identifier) @name.definition.function) @definition.function
; `M.f = function() end`, `f = function() end`, `local f = function() end`
(assignment_statement
  (variable_list . name: (dot_index_expression table: (_) @qualifier.definition.function field: (identifier) @name.definition.function) .)
  (expression_list . value: (function_definition) .)) @definition.function
(assignment_statement
  (variable_list . name: (identifier) @name.definition.function .)
  (expression_list . value: (function_definition) .)) @definition.function

; --- calls: `f()`, `t.f()`, `obj:m()` (require is an import) ---
(function_call name: (identifier) @name.reference.call) @reference.call
(function_call name: (dot_index_expression field: (identifier) @name.reference.call)) @reference.call
(function_call name: (method_index_expression method: (identifier) @name.reference.call)) @reference.call

; --- dynamic calls: `t[k]()`, `t["name"]()` ---
(function_call name: (bracket_index_expression field: (string) @name.reference.dynamic_call)) @reference.dynamic_call
(function_call name: (bracket_index_expression field: (identifier))) @reference.dynamic_call

; --- imports: `require("a.b")`, `require "a.b"` ---
(function_call
  name: (identifier) @_fn (#eq? @_fn "require")
  arguments: (arguments . (string) @name.reference.import)) @reference.import
