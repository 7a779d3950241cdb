; Local Memory tags for Python. Capture convention: local_memory_indexer.graph.extract.

; --- definitions (functions nested in a class become methods) ---
(class_definition name: (identifier) @name.definition.class) @definition.class
(function_definition name: (identifier) @name.definition.function) @definition.function

; --- calls ---
(call function: (identifier) @name.reference.call) @reference.call
(call function: (attribute attribute: (identifier) @name.reference.call)) @reference.call

; --- dynamic calls: the target is computed at run time ---
; getattr(obj, "name") spells its target only as a string, called or not
(call
  function: (identifier) @_fn (#eq? @_fn "getattr")
  arguments: (argument_list (_) . (string (string_content) @name.reference.dynamic_call))) @reference.dynamic_call
(call function: (call function: (identifier) @_fn (#eq? @_fn "getattr"))) @reference.dynamic_call
(call function: (subscript subscript: (string (string_content) @name.reference.dynamic_call))) @reference.dynamic_call
(call function: (subscript)) @reference.dynamic_call

; --- imports ---
(import_statement name: (dotted_name) @name.reference.import) @reference.import
(import_statement
  name: (aliased_import name: (dotted_name) @name.reference.import alias: (identifier) @alias.reference.import)) @reference.import
(import_from_statement module_name: (_) @name.reference.import) @reference.import
(import_from_statement name: (dotted_name) @imported.reference.import) @reference.import
(import_from_statement
  name: (aliased_import name: (dotted_name) @imported.reference.import alias: (identifier) @alias.reference.import)) @reference.import

; --- local types: `x = Client()`, `c: Client`, `self.x = Client()` type the receiver of later calls ---
(typed_parameter (identifier) @name.local type: (type (identifier) @type.local))
(typed_default_parameter name: (identifier) @name.local type: (type (identifier) @type.local))
(assignment left: [(identifier) (attribute)] @name.local right: (call function: (identifier) @type.local))
(assignment
  left: [(identifier) (attribute)] @name.local
  right: (call function: (attribute attribute: (identifier) @type.local)))
(assignment left: [(identifier) (attribute)] @name.local type: (type (identifier) @type.local))
