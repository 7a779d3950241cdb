; inherits: c_preprocessor
; Local Memory tags for C++. Capture convention: local_memory_indexer.graph.extract.
; Namespaces do not qualify names (like packages elsewhere); classes do. An out-of-class
; definition `void Client::flush()` is qualified by its scope: Client.flush.

; --- definitions ---
(class_specifier name: (type_identifier) @name.definition.class body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (destructor_name) (operator_name)]
      @name.definition.function)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name.definition.function))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name.definition.function))) @definition.function
; Aliases: `using Name = T;` (also as a template) and `using std::optional;` (a name the
; namespace re-exports: `absl::optional` is defined there).
(alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(using_declaration (qualified_identifier name: [(identifier) (type_identifier)] @name.definition.alias)) @definition.alias

; --- calls ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name.reference.call)) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name.reference.call)) @reference.call
(call_expression function: (template_function name: (identifier) @name.reference.call)) @reference.call
(call_expression
  function: (qualified_identifier name: (template_function name: (identifier) @name.reference.call))) @reference.call
(call_expression
  function: (field_expression field: (template_method name: (field_identifier) @name.reference.call))) @reference.call
(new_expression type: (type_identifier) @name.reference.call) @reference.call
(new_expression type: (qualified_identifier name: (type_identifier) @name.reference.call)) @reference.call

; --- imports ---
(preproc_include path: (string_literal) @name.reference.import) @reference.import
(preproc_include path: (system_lib_string) @name.reference.import) @reference.import

; --- local types: `Conn x`, `Conn* x = new Conn()`, `auto x = Conn()`, parameters and fields ---
(parameter_declaration
  type: (type_identifier) @type.local
  declarator: [(identifier) @name.local
               (reference_declarator (identifier) @name.local)
               (pointer_declarator declarator: (identifier) @name.local)])
(declaration
  type: (type_identifier) @type.local
  declarator: [(identifier) @name.local
               (init_declarator declarator: [(identifier) @name.local (pointer_declarator declarator: (identifier) @name.local)])])
(declaration
  declarator: (init_declarator
    declarator: (identifier) @name.local
    value: [(new_expression type: (type_identifier) @type.local) (call_expression function: (identifier) @type.local)]))
(field_declaration
  type: (type_identifier) @type.local
  declarator: [(field_identifier) @name.local (pointer_declarator declarator: (field_identifier) @name.local)])
