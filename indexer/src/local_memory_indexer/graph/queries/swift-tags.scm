; Local Memory tags for Swift (tree-sitter-swift 0.0.1). Capture convention: local_memory_indexer.graph.extract.
; One node type, class_declaration, holds classes, structs, enums, actors and extensions; its
; declaration_kind keyword tells them apart. An extension is a scope, as a Rust impl is: its
; functions are methods of the extended type (`extension Client` → Client.close).

; --- definitions (protocol requirements have no body and are other node types: not definitions) ---
(class_declaration declaration_kind: "struct" name: (type_identifier) @name.definition.struct) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name.definition.enum) @definition.enum
(class_declaration declaration_kind: "extension" name: (user_type) @name.scope) @scope
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(protocol_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(function_declaration name: (simple_identifier) @name.definition.function body: (function_body)) @definition.function
(init_declaration name: "init" @name.definition.constructor body: (function_body)) @definition.constructor
(deinit_declaration "deinit" @name.definition.function) @definition.function

(typealias_declaration name: (type_identifier) @name.definition.type) @definition.type
; --- calls: `f()`, `Client(...)` (constructs: a call of the type), `a.f()`, `a?.f()`, `Box<T>(...)` ---
(call_expression . (simple_identifier) @name.reference.call) @reference.call
(call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call))) @reference.call
(constructor_expression constructed_type: (user_type . (type_identifier) @name.reference.call)) @reference.call

; --- imports: modules (`import Foundation`, `import struct Vapor.Request`); never a project file ---
(import_declaration (identifier) @name.reference.import) @reference.import

; --- local types: `c: Conn` (parameters, properties), `let c = Conn(...)` ---
(parameter name: (simple_identifier) @name.local (user_type . (type_identifier) @type.local))
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @name.local)
  (type_annotation (user_type . (type_identifier) @type.local)))
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @name.local)
  value: (call_expression . (simple_identifier) @type.local))
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @name.local)
  value: (constructor_expression constructed_type: (user_type . (type_identifier) @type.local)))
