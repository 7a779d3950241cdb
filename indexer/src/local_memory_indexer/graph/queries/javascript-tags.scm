; Local Memory tags for JavaScript (and JSX). Capture convention: local_memory_indexer.graph.extract.

; --- definitions ---
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(class_declaration name: (identifier) @name.definition.class) @definition.class
(class name: (identifier) @name.definition.class) @definition.class
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(field_definition
  property: (property_identifier) @name.definition.method
  value: [(arrow_function) (function) (generator_function)]) @definition.method
(variable_declarator
  name: (identifier) @name.definition.function
  value: [(arrow_function) (function) (generator_function)]) @definition.function
; Foo.prototype.bar = function () {} is a method of Foo
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @qualifier.definition.method
      property: (property_identifier) @_proto (#eq? @_proto "prototype"))
    property: (property_identifier) @name.definition.method)
  right: [(arrow_function) (function)]) @definition.method
(assignment_expression
  left: (member_expression property: (property_identifier) @name.definition.function)
  right: [(arrow_function) (function)]) @definition.function
(pair
  key: (property_identifier) @name.definition.function
  value: [(arrow_function) (function)]) @definition.function

; --- calls (a JSX element renders, i.e. calls, its component) ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name.reference.call)) @reference.call
(new_expression constructor: (identifier) @name.reference.call) @reference.call
(new_expression constructor: (member_expression property: (property_identifier) @name.reference.call)) @reference.call
(jsx_opening_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]")) @reference.call
(jsx_self_closing_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]")) @reference.call

; --- dynamic calls ---
(call_expression function: (subscript_expression index: (string (string_fragment) @name.reference.dynamic_call))) @reference.dynamic_call
(call_expression function: (subscript_expression)) @reference.dynamic_call

; --- imports ---
(import_statement source: (string (string_fragment) @name.reference.import)) @reference.import
(import_statement (import_clause (namespace_import (identifier) @alias.reference.import))) @reference.import
(import_statement (import_clause . (identifier) @default.reference.import)) @reference.import
(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @imported.reference.import)))) @reference.import
(import_statement
  (import_clause
    (named_imports
      (import_specifier name: (identifier) @imported.reference.import alias: (identifier) @alias.reference.import)))) @reference.import
(export_statement source: (string (string_fragment) @name.reference.import)) @reference.import
(export_statement
  (export_clause (export_specifier name: (identifier) @imported.reference.import))
  source: (string)) @reference.import
(call_expression
  function: (identifier) @_fn (#eq? @_fn "require")
  arguments: (arguments . (string (string_fragment) @name.reference.import))) @reference.import
(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @name.reference.import))) @reference.import

; --- local types: `const x = new Client()`, `this.x = new Client()` ---
(variable_declarator name: (identifier) @name.local value: (new_expression constructor: (identifier) @type.local))
(assignment_expression left: (member_expression) @name.local right: (new_expression constructor: (identifier) @type.local))
