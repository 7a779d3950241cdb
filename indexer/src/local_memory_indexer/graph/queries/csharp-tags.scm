; Local Memory tags for C#. Capture convention: local_memory_indexer.graph.extract.
; Namespaces do not qualify names (like packages elsewhere); types do.

; --- definitions (abstract and interface members without a body are not definitions) ---
(class_declaration name: (identifier) @name.definition.class) @definition.class
(record_declaration name: (identifier) @name.definition.class) @definition.class
(struct_declaration name: (identifier) @name.definition.struct) @definition.struct
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(method_declaration name: (identifier) @name.definition.method body: (_)) @definition.method
(constructor_declaration name: (identifier) @name.definition.constructor) @definition.constructor
(local_function_statement name: (identifier) @name.definition.function) @definition.function

; --- calls ---
(invocation_expression function: (identifier) @name.reference.call) @reference.call
(invocation_expression function: (generic_name (identifier) @name.reference.call)) @reference.call
(invocation_expression function: (member_access_expression name: (identifier) @name.reference.call)) @reference.call
(invocation_expression
  function: (member_access_expression name: (generic_name (identifier) @name.reference.call))) @reference.call
(object_creation_expression type: (identifier) @name.reference.call) @reference.call
(object_creation_expression type: (generic_name (identifier) @name.reference.call)) @reference.call
(object_creation_expression type: (qualified_name name: (identifier) @name.reference.call)) @reference.call

; --- dynamic calls: reflection names its target as a string ---
(invocation_expression
  function: (member_access_expression name: (identifier) @_fn (#eq? @_fn "GetMethod"))
  arguments: (argument_list . (argument (string_literal) @name.reference.dynamic_call))) @reference.dynamic_call

; --- imports ---
(using_directive (qualified_name) @name.reference.import) @reference.import
(using_directive (identifier) @name.reference.import) @reference.import

; --- local types: `Conn c`, `var c = new Conn()`, fields ---
(parameter type: (identifier) @type.local name: (identifier) @name.local)
(variable_declaration type: (identifier) @type.local (variable_declarator name: (identifier) @name.local))
(variable_declaration
  (variable_declarator
    name: (identifier) @name.local
    (equals_value_clause (object_creation_expression type: (identifier) @type.local))))
