; Local Memory tags for Scala. Capture convention: local_memory_indexer.graph.extract.
; A companion `object Foo` qualifies its members as Foo.<name>, like the class it accompanies.

; --- definitions (abstract members without a body are declarations, not definitions) ---
(class_definition name: (identifier) @name.definition.class) @definition.class
(object_definition name: (identifier) @name.definition.class) @definition.class
(trait_definition name: (identifier) @name.definition.trait) @definition.trait
(enum_definition name: (identifier) @name.definition.enum) @definition.enum
(function_definition name: (identifier) @name.definition.function) @definition.function

(type_definition name: (type_identifier) @name.definition.type type: (_)) @definition.type
; --- calls: `f(x)`, `a.f(x)`, `f[T](x)`, `new Foo(x)` ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (field_expression field: (identifier) @name.reference.call)) @reference.call
(call_expression function: (generic_function function: (identifier) @name.reference.call)) @reference.call
(call_expression
  function: (generic_function function: (field_expression field: (identifier) @name.reference.call))) @reference.call
(instance_expression (type_identifier) @name.reference.call) @reference.call
(instance_expression (generic_type type: (type_identifier) @name.reference.call)) @reference.call

; --- imports: the whole clause; `a.b.{C, D => E}` is split when normalised ---
(import_declaration) @name.reference.import @reference.import

; --- local types: `c: Conn`, `val c = new Conn(...)`, `val c = Conn(...)` ---
(parameter name: (identifier) @name.local type: (type_identifier) @type.local)
(class_parameter name: (identifier) @name.local type: (type_identifier) @type.local)
(val_definition pattern: (identifier) @name.local type: (type_identifier) @type.local)
(val_definition pattern: (identifier) @name.local value: (instance_expression (type_identifier) @type.local))
(val_definition pattern: (identifier) @name.local value: (call_expression function: (identifier) @type.local))
