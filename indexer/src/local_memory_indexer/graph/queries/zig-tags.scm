; Local Memory tags for Zig. Capture convention: local_memory_indexer.graph.extract.
; A container is a value: `const Store = struct { ... };` defines Store, its functions are methods.

; --- definitions ---
(variable_declaration (identifier) @name.definition.struct (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name.definition.struct (union_declaration)) @definition.struct
(variable_declaration (identifier) @name.definition.enum (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name.definition.type (opaque_declaration)) @definition.type
(function_declaration name: (identifier) @name.definition.function body: (block)) @definition.function

; --- calls: `f(x)`, `a.f(x)` (builtins such as @import are not calls) ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (field_expression member: (identifier) @name.reference.call)) @reference.call

; --- dynamic calls: `@call(.auto, f, args)`, `@field(x, "name")(...)` ---
(call_expression function: (builtin_function (builtin_identifier) @_fn (#eq? @_fn "@field")
  (arguments (_) . (string (string_content) @name.reference.dynamic_call)))) @reference.dynamic_call
(builtin_function
  (builtin_identifier) @_fn (#eq? @_fn "@call")
  (arguments . (_) . (identifier) @name.reference.dynamic_call)) @reference.dynamic_call
(builtin_function (builtin_identifier) @_fn (#eq? @_fn "@call")) @reference.dynamic_call

; --- imports: `@import("std")`, `@import("util.zig")` ---
(builtin_function
  (builtin_identifier) @_fn (#eq? @_fn "@import")
  (arguments . (string (string_content) @name.reference.import))) @reference.import

; --- local types: `s: *Store`, `s: Store`, `var s = Store{...}`, `var s: Store = ...` ---
(parameter name: (identifier) @name.local type: (identifier) @type.local)
(parameter name: (identifier) @name.local type: (pointer_type (identifier) @type.local))
(variable_declaration . (identifier) @name.local (struct_initializer . (identifier) @type.local))
(variable_declaration . (identifier) @name.local type: (identifier) @type.local)
