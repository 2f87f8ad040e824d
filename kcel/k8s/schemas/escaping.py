"""CRD property names <-> CEL identifiers, escaped exactly as apiserver pkg/cel/escaping.go does it.

A schema property such as `x-kubernetes-foo` or `namespace` cannot be written as a CEL field name, so
Kubernetes exposes it under an escaped name (`x__dash__kubernetes__dash__foo`, `__namespace__`) and maps
the escaped name back when a field is looked up at run time.
"""

from __future__ import annotations

import re

# The identifiers the CEL grammar reserves, plus `var`, `void` and `while`, which escaping.go also escapes.
RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})  # fmt: skip

_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_UNESCAPES = {"underscores": "__", "dot": ".", "dash": "-", "slash": "/"}

# Leftmost-first alternation, like Go's regexp: `a___a` escapes its first two underscores only.
_EXPANDED = re.compile(r"__|[./-]")
_UNSUPPORTED = re.compile(r"[^A-Za-z0-9_./-]")
_ESCAPE_SEQUENCE = re.compile(r"__([^_]+)__")


def escape(name: str) -> str | None:
    """The CEL field name for a schema property, or None when the property is not accessible from CEL.

    Examples:
        >>> escape("a.b"), escape("namespace"), escape("a__b"), escape("size")
        ('a__dot__b', '__namespace__', 'a__underscores__b', 'size')
        >>> escape("1up") is None, escape("a@b") is None
        (True, True)
    """
    if not name or name[0] in "0123456789":
        return None
    if name in RESERVED:
        return f"__{name}__"
    if _UNSUPPORTED.search(name):
        return None
    return _EXPANDED.sub(lambda match: _ESCAPES[match.group()], name)


def unescape(escaped: str) -> str | None:
    """The property name behind a CEL field name, or None when it holds an unknown escape sequence.

    A reserved word is only unescaped when it is the whole name, so a data key such as `__int__extra` can
    never be reached.

    Examples:
        >>> unescape("a__dash__b"), unescape("__if__"), unescape("plain")
        ('a-b', 'if', 'plain')
        >>> unescape("__if__x") is None, unescape("__int__") is None
        (True, True)
    """
    pieces: list[str] = []
    done = 0
    for match in _ESCAPE_SEQUENCE.finditer(escaped):
        word = match.group(1)
        if word in _UNESCAPES:
            pieces += (escaped[done : match.start()], _UNESCAPES[word])
        elif word in RESERVED and len(match.group()) == len(escaped):
            return word
        else:
            return None
        done = match.end()
    return "".join(pieces) + escaped[done:] if pieces else escaped
