; Local Memory tags for Go. Capture convention: local_memory_indexer.graph.extract.
; A method is qualified by its receiver type: func (s *Server) Start() -> Server.Start.

; --- definitions ---
(function_declaration name: (identifier) @name.definition.function) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @qualifier.definition.method
        (pointer_type (type_identifier) @qualifier.definition.method)
        (generic_type type: (type_identifier) @qualifier.definition.method)
        (pointer_type (generic_type type: (type_identifier) @qualifier.definition.method))
      ]))
  name: (field_identifier) @name.definition.method) @definition.method
(type_spec name: (type_identifier) @name.definition.struct type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name.definition.interface type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name.definition.type) @definition.type

; --- calls ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (selector_expression field: (field_identifier) @name.reference.call)) @reference.call
(call_expression function: (index_expression operand: (identifier) @name.reference.call)) @reference.call
(call_expression
  function: (index_expression operand: (selector_expression field: (field_identifier) @name.reference.call))) @reference.call

; --- dynamic calls: reflection names its target as a string ---
(call_expression
  function: (selector_expression field: (field_identifier) @_fn (#eq? @_fn "MethodByName"))
  arguments: (argument_list . (interpreted_string_literal) @name.reference.dynamic_call)) @reference.dynamic_call

; --- imports ---
(import_spec path: (interpreted_string_literal) @name.reference.import) @reference.import
(import_spec path: (raw_string_literal) @name.reference.import) @reference.import

; --- local types: receivers and parameters `s *Server`, `x := &Server{}`, `var x Server` ---
(parameter_declaration
  name: (identifier) @name.local
  type: [(type_identifier) @type.local
         (pointer_type (type_identifier) @type.local)
         (qualified_type name: (type_identifier) @type.local)
         (pointer_type (qualified_type name: (type_identifier) @type.local))])
(short_var_declaration
  left: (expression_list . (identifier) @name.local)
  right: (expression_list .
    [(composite_literal type: (type_identifier) @type.local)
     (unary_expression operand: (composite_literal type: (type_identifier) @type.local))]))
(var_spec name: (identifier) @name.local type: [(type_identifier) @type.local (pointer_type (type_identifier) @type.local)])
