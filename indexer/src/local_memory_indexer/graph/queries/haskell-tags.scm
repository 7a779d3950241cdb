; Local Memory tags for Haskell. Capture convention: local_memory_indexer.graph.extract.
; Only top-level equations and class/instance members are definitions (`where`/`let` bindings
; are locals); the equations of one function are joined into one definition.

; --- definitions ---
(haskell (function name: (variable) @name.definition.function) @definition.function)
(haskell (function infix: (infix op: (varop (operator) @name.definition.function))) @definition.function)
(haskell (adt name: (type) @name.definition.type) @definition.type)
(haskell (newtype name: (type) @name.definition.type) @definition.type)
(haskell (type_alias name: (type) @name.definition.type) @definition.type)
(haskell (class (class_head class: (class_name (type) @name.definition.interface))) @definition.interface)
(class_body (function name: (variable) @name.definition.function) @definition.function)
; an instance implements its class's functions: a scope named by the class
(haskell (instance (instance_head class: (class_name (type) @name.scope))) @scope)
(instance (function name: (variable) @name.definition.function) @definition.function)

; --- calls: an applied name, `f $ x`, x `f` y, and an action standing alone (`main = run`) ---
(exp_apply . (exp_name [(variable) @name.reference.call (qualified_variable (variable) @name.reference.call .)])) @reference.call
(exp_infix
  . (exp_name [(variable) @name.reference.call (qualified_variable (variable) @name.reference.call .)])
  . (operator) @_op (#eq? @_op "$")) @reference.call
(exp_infix (variable) @name.reference.call @reference.call)
(stmt (exp_name [(variable) @name.reference.call (qualified_variable (variable) @name.reference.call .)]) @reference.call)
(function rhs: (exp_name [(variable) @name.reference.call (qualified_variable (variable) @name.reference.call .)]) @reference.call)

; --- imports: `import qualified Data.Map as M` ---
(import [(qualified_module) (module)] @name.reference.import . (module) @alias.reference.import) @reference.import
(import . [(qualified_module) (module)] @name.reference.import) @reference.import
