; Local Memory tags shared by C and C++ (each inherits this file): the preprocessor's and the
; type system's definitions the two grammars spell alike.
; Macros with a value (a bare `#define FOO_H` include guard defines nothing a reader looks up),
; function-like macros, and typedef names.
(preproc_def name: (identifier) @name.definition.macro value: (_)) @definition.macro
(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(type_definition
  declarator: (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name.definition.type)))) @definition.type
