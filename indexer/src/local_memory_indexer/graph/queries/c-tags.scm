; inherits: c_preprocessor
; Local Memory tags for C. Capture convention: local_memory_indexer.graph.extract.

; --- definitions (prototypes are declarations, not definitions) ---
(function_definition
  declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name.definition.function))) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name.definition.function)))) @definition.function
(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum

; --- calls ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name.reference.call)) @reference.call

; --- imports ---
(preproc_include path: (string_literal) @name.reference.import) @reference.import
(preproc_include path: (system_lib_string) @name.reference.import) @reference.import
