; Local Memory tags for Rust. Capture convention: local_memory_indexer.graph.extract.
; An impl block is a scope: functions inside `impl Server` are qualified Server.<name>.

; --- scopes and definitions ---
(impl_item type: (type_identifier) @name.scope) @scope
(impl_item type: (generic_type type: (type_identifier) @name.scope)) @scope
(impl_item type: (scoped_type_identifier name: (type_identifier) @name.scope)) @scope
(trait_item name: (type_identifier) @name.definition.trait) @definition.trait
(struct_item name: (type_identifier) @name.definition.struct) @definition.struct
(enum_item name: (type_identifier) @name.definition.enum) @definition.enum
(union_item name: (type_identifier) @name.definition.struct) @definition.struct
(type_item name: (type_identifier) @name.definition.type) @definition.type
(mod_item name: (identifier) @name.definition.module body: (declaration_list)) @definition.module
(function_item name: (identifier) @name.definition.function) @definition.function
(macro_definition name: (identifier) @name.definition.macro) @definition.macro
; a `pub use` re-export brings a name into this module's public API (`pub use axum_core::extract::
; {FromRequest, ...}` in `extract/mod.rs`): an alias, as C++ `using` is; `pub(crate)` is no API.
; The name is the definition node: one `use` declaration defines each name of its list.
(use_declaration (visibility_modifier) @_vis (#eq? @_vis "pub")
  argument: (scoped_identifier name: (identifier) @name.definition.alias @definition.alias))
(use_declaration (visibility_modifier) @_vis (#eq? @_vis "pub")
  argument: (scoped_use_list list: (use_list (identifier) @name.definition.alias @definition.alias)))
(use_declaration (visibility_modifier) @_vis (#eq? @_vis "pub")
  argument: (scoped_use_list
    list: (use_list (scoped_identifier name: (identifier) @name.definition.alias @definition.alias))))
(use_declaration (visibility_modifier) @_vis (#eq? @_vis "pub")
  argument: (scoped_use_list
    list: (use_list (use_as_clause alias: (identifier) @name.definition.alias @definition.alias))))
(use_declaration (visibility_modifier) @_vis (#eq? @_vis "pub")
  argument: (use_as_clause alias: (identifier) @name.definition.alias @definition.alias))

; --- calls (macros are not calls) ---
(call_expression function: (identifier) @name.reference.call) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name.reference.call)) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name.reference.call)) @reference.call
(call_expression function: (generic_function function: (identifier) @name.reference.call)) @reference.call
(call_expression
  function: (generic_function function: (scoped_identifier name: (identifier) @name.reference.call))) @reference.call
(call_expression
  function: (generic_function function: (field_expression field: (field_identifier) @name.reference.call))) @reference.call

; --- imports: `use` paths and out-of-line `mod name;` declarations ---
(use_declaration argument: (_) @name.reference.import) @reference.import
(mod_item name: (identifier) @name.reference.import !body) @reference.import

; --- local types: `c: &Conn`, `let x: Conn`, `let x = Conn::new()`, `let x = Conn { .. }` ---
(parameter
  pattern: (identifier) @name.local
  type: [(type_identifier) @type.local (reference_type type: (type_identifier) @type.local)])
(let_declaration
  pattern: (identifier) @name.local
  type: [(type_identifier) @type.local (reference_type type: (type_identifier) @type.local)])
(let_declaration
  pattern: (identifier) @name.local
  value: (call_expression function: (scoped_identifier path: (identifier) @type.local)))
(let_declaration pattern: (identifier) @name.local value: (struct_expression name: (type_identifier) @type.local))
