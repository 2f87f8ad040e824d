"""cel-go's literal validators (`cel.ValidateDurationLiterals`, `ValidateTimestampLiterals`,
`ValidateRegexLiterals`): after type-checking, a literal argument that can never work is a
compile error ("invalid duration argument") instead of a failure at run time. Kubernetes turns
them on from 1.29.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kcel.checker.decls import Overload
from kcel.errors import EvalError, Issue
from kcel.goregex import GoRegexError, compile_go_regex
from kcel.parser.ast import Call, Const, Expr, walk


def literal_issues(root: Expr, overloads: Callable[[str], Sequence[Overload]]) -> list[Issue]:
    """An issue per `duration(...)`/`timestamp(...)` literal that fails to convert and per bad `matches` pattern."""
    issues: list[Issue] = []
    for node in walk(root):
        if not isinstance(node, Call) or not node.args or not isinstance(node.args[0], Const):
            continue
        literal = node.args[0]  # the first argument after any receiver, as cel-go counts it
        if node.function in ("duration", "timestamp") and node.target is None and len(node.args) == 1:
            if not _converts(literal.value, overloads(node.function)):
                issues.append(Issue(f"invalid {node.function} argument", literal.pos, literal.id))
        elif node.function == "matches" and isinstance(literal.value, str):
            try:
                compile_go_regex(literal.value)
            except GoRegexError:
                issues.append(Issue("invalid matches argument", literal.pos, literal.id))
    return issues


def _converts(value: object, overloads: Sequence[Overload]) -> bool:
    for overload in overloads:
        if len(overload.args) == 1 and not overload.member and overload.args[0].name == _type_name(value):
            try:
                overload.impl(value)
            except EvalError:
                return False
    return True


def _type_name(value: object) -> str:
    return "string" if isinstance(value, str) else "int" if type(value) is int else type(value).__name__
