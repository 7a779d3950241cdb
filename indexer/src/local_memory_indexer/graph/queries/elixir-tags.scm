; Local Memory tags for Elixir. Capture convention: local_memory_indexer.graph.extract.
; Definitions are macro calls (`defmodule`, `def`...); a module's functions are its methods.

; --- definitions ---
(call
  target: (identifier) @_def (#eq? @_def "defmodule")
  (arguments . (alias) @name.definition.module)) @definition.module
(call
  target: (identifier) @_def (#eq? @_def "defprotocol")
  (arguments . (alias) @name.definition.interface)) @definition.interface
; `defimpl Proto, for: Type` implements the protocol's functions: a scope named by the protocol
(call
  target: (identifier) @_def (#eq? @_def "defimpl")
  (arguments . (alias) @name.scope)) @scope
; `def f(x)`, `def f(x) when guard`, `def f` (no arguments)
(call
  target: (identifier) @_def (#match? @_def "^(def|defp|defguard|defguardp|defdelegate|defn|defnp)$")
  (arguments . [
    (call target: (identifier) @name.definition.function)
    (binary_operator left: (call target: (identifier) @name.definition.function))
    (identifier) @name.definition.function
  ])) @definition.function
(call
  target: (identifier) @_def (#match? @_def "^(defmacro|defmacrop)$")
  (arguments . [
    (call target: (identifier) @name.definition.macro)
    (binary_operator left: (call target: (identifier) @name.definition.macro))
    (identifier) @name.definition.macro
  ])) @definition.macro

; --- calls: `f(x)`, `Mod.f(x)`, `x |> f()` (definitions and directives are not calls) ---
(call
  target: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defmodule|defprotocol|defimpl|defstruct|defexception|defoverridable|defn|defnp|alias|import|require|use|quote|unquote|case|cond|if|unless|with|for|fn|try|receive|raise|reraise|throw)$")) @reference.call
(call target: (dot right: (identifier) @name.reference.call)) @reference.call

; --- dynamic calls: apply/3 names its target as an atom ---
(call
  target: (identifier) @_fn (#eq? @_fn "apply")
  (arguments . (_) . (atom) @name.reference.dynamic_call)) @reference.dynamic_call
(call target: (dot left: (identifier) @_m (#eq? @_m "Kernel") right: (identifier) @_fn (#eq? @_fn "apply"))
  (arguments . (_) . (atom) @name.reference.dynamic_call)) @reference.dynamic_call

; --- imports: alias/import/require/use of a module (`alias A.{B, C}` is split when normalised) ---
(call
  target: (identifier) @_fn (#match? @_fn "^(alias|import|require|use)$")
  (arguments . [(alias) (dot left: (alias) right: (tuple))] @name.reference.import)) @reference.import
