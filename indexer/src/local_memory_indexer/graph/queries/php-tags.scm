; Local Memory tags for PHP. Capture convention: local_memory_indexer.graph.extract.
; Namespaces do not qualify names (like packages elsewhere); classes do.

; --- definitions ---
(function_definition name: (name) @name.definition.function) @definition.function
(class_declaration name: (name) @name.definition.class) @definition.class
(interface_declaration name: (name) @name.definition.interface) @definition.interface
(trait_declaration name: (name) @name.definition.trait) @definition.trait
(enum_declaration name: (name) @name.definition.enum) @definition.enum
(method_declaration name: (name) @name.definition.method body: (compound_statement)) @definition.method

; --- calls ---
(function_call_expression function: (name) @name.reference.call) @reference.call
(function_call_expression function: (qualified_name (name) @name.reference.call .)) @reference.call
(member_call_expression name: (name) @name.reference.call) @reference.call
(nullsafe_member_call_expression name: (name) @name.reference.call) @reference.call
(scoped_call_expression name: (name) @name.reference.call) @reference.call
(object_creation_expression (name) @name.reference.call) @reference.call
(object_creation_expression (qualified_name (name) @name.reference.call .)) @reference.call

; --- dynamic calls ---
(function_call_expression
  function: (name) @_fn (#match? @_fn "^(call_user_func|call_user_func_array)$")
  arguments: (arguments . (argument [(string (string_value) @name.reference.dynamic_call)
                                     (encapsed_string (string_value) @name.reference.dynamic_call)]))) @reference.dynamic_call
(function_call_expression function: (name) @_fn (#match? @_fn "^(call_user_func|call_user_func_array)$")) @reference.dynamic_call
(function_call_expression function: (variable_name)) @reference.dynamic_call
(member_call_expression name: (variable_name)) @reference.dynamic_call

; --- imports: `use` clauses and require/include of a literal path ---
(namespace_use_clause [(qualified_name) (name)] @name.reference.import) @reference.import
(namespace_use_declaration
  (namespace_name) @prefix.reference.import
  (namespace_use_group
    (namespace_use_group_clause (namespace_name) @name.reference.import))) @reference.import
(require_expression [(string (string_value) @name.reference.import)
  (encapsed_string (string_value) @name.reference.import)
  (binary_expression right: [(string (string_value) @name.reference.import)
                             (encapsed_string (string_value) @name.reference.import)])]) @reference.import
(require_once_expression [(string (string_value) @name.reference.import)
  (encapsed_string (string_value) @name.reference.import)
  (binary_expression right: [(string (string_value) @name.reference.import)
                             (encapsed_string (string_value) @name.reference.import)])]) @reference.import
(include_expression [(string (string_value) @name.reference.import)
  (encapsed_string (string_value) @name.reference.import)
  (binary_expression right: [(string (string_value) @name.reference.import)
                             (encapsed_string (string_value) @name.reference.import)])]) @reference.import
(include_once_expression [(string (string_value) @name.reference.import)
  (encapsed_string (string_value) @name.reference.import)
  (binary_expression right: [(string (string_value) @name.reference.import)
                             (encapsed_string (string_value) @name.reference.import)])]) @reference.import

; --- local types: `Conn $c`, `$x = new Conn()`, `$this->x = new Conn()`, typed properties ---
(simple_parameter type: (union_type (named_type (name) @type.local)) name: (variable_name) @name.local)
(assignment_expression
  left: [(variable_name) (member_access_expression)] @name.local
  right: (object_creation_expression (name) @type.local))
(property_declaration type: (union_type (named_type (name) @type.local)) (property_element (variable_name) @name.local))
(property_declaration type: (union_type (optional_type (named_type (name) @type.local))) (property_element (variable_name) @name.local))
