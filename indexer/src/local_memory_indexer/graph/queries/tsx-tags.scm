; inherits: typescript
; Local Memory tags for TSX: TypeScript plus JSX. A JSX element renders, i.e. calls, its component.

(jsx_opening_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]")) @reference.call
(jsx_self_closing_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]")) @reference.call
