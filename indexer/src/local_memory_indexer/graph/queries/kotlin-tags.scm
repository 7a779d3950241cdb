; Local Memory tags for Kotlin. Capture convention: local_memory_indexer.graph.extract.
; A companion object is transparent: its functions are qualified by the enclosing class.

; --- definitions (declarations without a body are not definitions) ---
(class_declaration "interface" name: (type_identifier) @name.definition.interface) @definition.interface
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(object_declaration name: (type_identifier) @name.definition.class) @definition.class
(function_declaration
  receiver: (user_type (type_identifier) @qualifier.definition.function)
  name: (simple_identifier) @name.definition.function
  body: (function_body)) @definition.function
(function_declaration name: (simple_identifier) @name.definition.function body: (function_body)) @definition.function

(type_alias name: (type_identifier) @name.definition.type) @definition.type
; --- calls ---
(call_expression . (simple_identifier) @name.reference.call) @reference.call
(call_expression . (navigation_expression (navigation_suffix (simple_identifier) @name.reference.call) .)) @reference.call

; --- imports ---
(import_header (identifier) @name.reference.import) @reference.import

; --- local types: `c: Conn`, `val x = Conn()`, `class A(val c: Conn)` ---
(parameter (simple_identifier) @name.local (user_type (type_identifier) @type.local))
(class_parameter (simple_identifier) @name.local (user_type (type_identifier) @type.local))
(property_declaration (variable_declaration (simple_identifier) @name.local (user_type (type_identifier) @type.local)))
(property_declaration
  (variable_declaration (simple_identifier) @name.local)
  (call_expression . (simple_identifier) @type.local))
