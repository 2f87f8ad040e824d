"""cel-go's name resolution, shared by the checker and the planner so both read a name the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kcel.checker.decls import Overload
from kcel.parser.ast import Call, Expr, Ident, Select

IsName = Callable[[str], bool]


def candidates(name: str, container: str) -> list[str]:
    """The names `name` may denote: innermost container first; a leading dot means the root only."""
    if name.startswith("."):
        return [name[1:]]
    if not container:
        return [name]
    parts = container.split(".")
    return [".".join([*parts[:i], name]) for i in range(len(parts), -1, -1)]


def qualified_name(node: Expr, is_local: IsName) -> str | None:
    """`a.b.c` for an identifier chain that is not rooted in a comprehension variable."""
    parts: list[str] = []
    while isinstance(node, Select) and not node.test_only:
        parts.append(node.field)
        node = node.operand
    if not isinstance(node, Ident) or is_local(node.name):
        return None
    parts.append(node.name)
    return ".".join(reversed(parts))


def names_variable(name: str, container: str, is_local: IsName, is_variable: IsName) -> bool:
    """Whether a dotted name starts with a variable, so `x.f()` is a method call on it."""
    parts = name.lstrip(".").split(".")
    if is_local(parts[0]):
        return True
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    return any(is_variable(c) for p in prefixes for c in candidates(p, container))


def resolve_function(
    node: Call,
    container: str,
    overloads: Callable[[str], Sequence[Overload]],
    is_local: IsName,
    is_variable: IsName,
) -> tuple[str, tuple[Expr, ...]]:
    """The function a call names and its arguments, receiver first for member calls.

    `ns.f(x)` is the global function `ns.f` when `ns` names no variable and `ns.f` is declared.
    """
    if node.target is None:
        for candidate in candidates(node.function, container):
            if overloads(candidate):
                return candidate, node.args
        return node.function.lstrip("."), node.args
    namespace = qualified_name(node.target, is_local)
    if namespace is not None and not names_variable(namespace, container, is_local, is_variable):
        for candidate in candidates(f"{namespace}.{node.function}", container):
            if any(not o.member for o in overloads(candidate)):
                return candidate, node.args
    return node.function, (node.target, *node.args)
