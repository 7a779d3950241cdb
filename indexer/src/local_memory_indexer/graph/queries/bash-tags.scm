; Local Memory tags for Bash. Capture convention: local_memory_indexer.graph.extract.
; Every command is a call site; resolution keeps those that name a function of the project.

; --- definitions ---
(function_definition name: (word) @name.definition.function) @definition.function

; --- calls: a command by name (`source` / `.` are imports) ---
(command name: (command_name (word) @name.reference.call)) @reference.call

; --- dynamic calls: `"$handler" args`, `eval "..."` ---
(command name: (command_name [(simple_expansion) (expansion) (string)])) @reference.dynamic_call
(command name: (command_name (word) @_fn (#eq? @_fn "eval"))) @reference.dynamic_call

; --- imports: `source lib/x.sh`, `. "$DIR/x.sh"` ---
(command
  name: (command_name (word) @_fn (#match? @_fn "^(source|\\.)$"))
  . argument: [(word) (string) (raw_string) (concatenation)] @name.reference.import) @reference.import
