; Local Memory tags for Ruby. Capture convention: local_memory_indexer.graph.extract.

; --- definitions ---
(class name: [(constant) (scope_resolution)] @name.definition.class) @definition.class
(module name: [(constant) (scope_resolution)] @name.definition.module) @definition.module
(method name: (_) @name.definition.function) @definition.function
(singleton_method name: (_) @name.definition.method) @definition.method

; --- calls: explicit calls, and a bare identifier standing alone as a statement ---
(call method: (identifier) @name.reference.call) @reference.call
(body_statement (identifier) @name.reference.call @reference.call)
(block_body (identifier) @name.reference.call @reference.call)
(then (identifier) @name.reference.call @reference.call)
(else (identifier) @name.reference.call @reference.call)

; --- dynamic calls: send/public_send name their target as a symbol or string ---
(call
  method: (identifier) @_fn (#match? @_fn "^(send|public_send|__send__|method|instance_method)$")
  arguments: (argument_list . [(simple_symbol) (string (string_content))] @name.reference.dynamic_call)) @reference.dynamic_call
(call
  method: (identifier) @_fn (#match? @_fn "^(send|public_send|__send__)$")) @reference.dynamic_call

; --- imports ---
(call
  method: (identifier) @_fn (#match? @_fn "^(require|require_relative|load|autoload)$")
  arguments: (argument_list (string (string_content) @name.reference.import))) @reference.import

; --- local types: `x = Conn.new`, `@x = Conn.new` ---
(assignment
  left: [(identifier) (instance_variable)] @name.local
  right: (call receiver: (constant) @type.local method: (identifier) @_fn (#eq? @_fn "new")))
