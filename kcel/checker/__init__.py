"""Stage 2: the CEL type system and type checking of parsed expressions."""
