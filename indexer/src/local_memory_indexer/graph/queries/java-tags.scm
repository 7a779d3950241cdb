; Local Memory tags for Java. Capture convention: local_memory_indexer.graph.extract.

; --- definitions (abstract and interface methods without a body are not definitions) ---
(class_declaration name: (identifier) @name.definition.class) @definition.class
(record_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(annotation_type_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(method_declaration name: (identifier) @name.definition.method body: (block)) @definition.method
(constructor_declaration name: (identifier) @name.definition.constructor) @definition.constructor
(compact_constructor_declaration name: (identifier) @name.definition.constructor) @definition.constructor

; --- calls ---
(method_invocation name: (identifier) @name.reference.call) @reference.call
(object_creation_expression type: (type_identifier) @name.reference.call) @reference.call
(object_creation_expression type: (generic_type (type_identifier) @name.reference.call)) @reference.call
(object_creation_expression type: (scoped_type_identifier (type_identifier) @name.reference.call .)) @reference.call

; --- dynamic calls: reflection names its target as a string ---
(method_invocation
  name: (identifier) @_fn (#match? @_fn "^(getMethod|getDeclaredMethod)$")
  arguments: (argument_list . (string_literal) @name.reference.dynamic_call)) @reference.dynamic_call

; --- imports ---
(import_declaration (scoped_identifier) @name.reference.import) @reference.import
(import_declaration (identifier) @name.reference.import) @reference.import

; --- local types: `Conn c`, `var c = new Conn()`, fields ---
(local_variable_declaration type: (type_identifier) @type.local declarator: (variable_declarator name: (identifier) @name.local))
(local_variable_declaration
  declarator: (variable_declarator name: (identifier) @name.local value: (object_creation_expression type: (type_identifier) @type.local)))
(formal_parameter type: (type_identifier) @type.local name: (identifier) @name.local)
(field_declaration type: (type_identifier) @type.local declarator: (variable_declarator name: (identifier) @name.local))
