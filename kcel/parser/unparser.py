"""AST -> CEL text, with as few parentheses as re-parsing allows, plus a debug `dump()`.

`parse(unparse(p)).expr == p.expr` holds for every parse: macro expansions print as the call
that was written, `&&`/`||` chains print flat exactly when the parser's balancing would
rebuild the same tree, and literals print in a form the lexer reads back to the same value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kcel.parser import Parsed
from kcel.parser.ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Select,
)
from kcel.values import Uint

_BINARY = {
    "_||_": ("||", 7), "_&&_": ("&&", 6),
    "_==_": ("==", 5), "_!=_": ("!=", 5), "_<_": ("<", 5), "_<=_": ("<=", 5), "_>_": (">", 5),
    "_>=_": (">=", 5), "@in": ("in", 5),
    "_+_": ("+", 4), "_-_": ("-", 4), "_*_": ("*", 3), "_/_": ("/", 3), "_%_": ("%", 3),
}  # fmt: skip
_UNARY = {"!_": "!", "-_": "-"}
_CONDITIONAL, _UNARY_PREC, _MEMBER, _ATOM = 8, 2, 1, 0
_TOKENS_AFTER_DOT = frozenset({"true", "false", "null", "in"})
_BACKTICK_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/ ")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\a": "\\a",
            "\b": "\\b", "\f": "\\f", "\v": "\\v"}  # fmt: skip


def unparse(parsed: Parsed) -> str:
    """CEL text that parses back to the same tree.

    >>> from kcel.parser import parse
    >>> unparse(parse("a.all(x, x > (1 + 2) * 3)"))
    'a.all(x, x > (1 + 2) * 3)'
    """
    return _Unparser(parsed.macro_calls).text(parsed.expr)


def unparse_node(parsed: Parsed, node: Expr) -> str:
    """CEL text of one subexpression of `parsed`, its macros written as they were."""
    return _Unparser(parsed.macro_calls).text(node)


class _Unparser:
    def __init__(self, macro_calls: Mapping[int, Call]) -> None:
        self.macro_calls = macro_calls

    def text(self, node: Expr) -> str:
        node = self.macro_calls.get(node.id, node)
        if isinstance(node, Const):
            return const_text(node.value)
        if isinstance(node, Ident):
            return node.name
        if isinstance(node, Select):
            return self._select(node)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, CreateList):
            marks = set(node.optional_indices)
            items = (("?" if i in marks else "") + self.text(e) for i, e in enumerate(node.elements))
            return "[" + ", ".join(items) + "]"
        if isinstance(node, CreateMap):
            items = (f"{'?' if e.optional else ''}{self.text(e.key)}: {self.text(e.value)}" for e in node.entries)
            return "{" + ", ".join(items) + "}"
        if isinstance(node, CreateStruct):
            items = (f"{'?' if f.optional else ''}{_field(f.name)}: {self.text(f.value)}" for f in node.fields)
            return node.type_name + "{" + ", ".join(items) + "}"
        assert isinstance(node, Comprehension)
        raise ValueError("a comprehension can only be unparsed from the macro call it came from")

    def precedence(self, node: Expr) -> int:
        node = self.macro_calls.get(node.id, node)
        if isinstance(node, Call):
            if node.function in _BINARY:
                return _BINARY[node.function][1]
            if node.function == "_?_:_":
                return _CONDITIONAL
            if node.function in _UNARY:
                return _UNARY_PREC
            return _MEMBER if node.target is not None or node.function.startswith("_") else _ATOM
        if isinstance(node, Select) and not node.test_only:
            return _MEMBER
        if isinstance(node, Const) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            # A negative number is a literal of its own, but a target's sign must not bind to a call.
            return _UNARY_PREC if _is_negative(node.value) else _ATOM
        return _ATOM

    def wrapped(self, node: Expr, wrap: bool) -> str:
        text = self.text(node)
        return f"({text})" if wrap else text

    def _select(self, node: Select) -> str:
        if node.test_only:
            return f"has({self.wrapped(node.operand, self.precedence(node.operand) > _MEMBER)}.{_field(node.field)})"
        return f"{self.wrapped(node.operand, self.precedence(node.operand) > _MEMBER)}.{_field(node.field)}"

    def _call(self, node: Call) -> str:
        fn, args = node.function, node.args
        if fn in _BINARY:
            return self._binary(node)
        if fn in _UNARY:
            operand = args[0]
            wrap = self.precedence(operand) > _UNARY_PREC or _is_unary(operand) or isinstance(operand, Const)
            return _UNARY[fn] + self.wrapped(operand, wrap)
        if fn == "_?_:_":
            cond, then = (self.wrapped(a, self.precedence(a) >= _CONDITIONAL) for a in args[:2])
            return f"{cond} ? {then} : {self.text(args[2])}"
        if fn in ("_[_]", "_[?_]"):
            mark = "?" if fn == "_[?_]" else ""
            return f"{self._target(args[0])}[{mark}{self.text(args[1])}]"
        if fn == "_?._" and isinstance(args[1], Const) and isinstance(args[1].value, str):
            return f"{self._target(args[0])}.?{_field(args[1].value)}"
        arg_text = ", ".join(self.text(a) for a in args)
        if node.target is None:
            return f"{fn}({arg_text})"
        return f"{self._target(node.target)}.{fn}({arg_text})"

    def _target(self, node: Expr) -> str:
        return self.wrapped(node, self.precedence(node) > _MEMBER)

    def _binary(self, node: Call) -> str:
        symbol, prec = _BINARY[node.function]
        if node.function in ("_&&_", "_||_"):
            terms = _chain_terms(node, node.function)
            if _is_balanced(node, node.function, terms):
                return f" {symbol} ".join(self.wrapped(t, self.precedence(t) >= prec) for t in terms)
        left, right = node.args
        # Operators are left-associative; a nested `&&`/`||` keeps its parentheses so the
        # parser's balancing sees it as one term.
        left_wrap = self.precedence(left) >= prec if symbol in ("&&", "||") else self.precedence(left) > prec
        return f"{self.wrapped(left, left_wrap)} {symbol} {self.wrapped(right, self.precedence(right) >= prec)}"


def _is_negative(value: float) -> bool:
    return value < 0 or (value == 0 and math.copysign(1.0, value) < 0)


def _is_unary(node: Expr) -> bool:
    return isinstance(node, Call) and node.function in _UNARY


def _chain_terms(node: Expr, function: str) -> list[Expr]:
    if isinstance(node, Call) and node.function == function and len(node.args) == 2:
        return _chain_terms(node.args[0], function) + _chain_terms(node.args[1], function)
    return [node]


def _is_balanced(node: Expr, function: str, terms: list[Expr]) -> bool:
    """Whether re-parsing `t1 op t2 op ... tn` rebuilds exactly this tree (see Builder._balance)."""

    def shape(lo: int, hi: int) -> object:
        mid = (lo + hi + 1) // 2
        left = mid if mid == lo else shape(lo, mid - 1)
        right = mid + 1 if mid == hi else shape(mid + 1, hi)
        return (left, right)

    def actual(n: Expr, counter: list[int]) -> object:
        if isinstance(n, Call) and n.function == function and len(n.args) == 2:
            return (actual(n.args[0], counter), actual(n.args[1], counter))
        counter[0] += 1
        return counter[0] - 1

    return shape(0, len(terms) - 2) == actual(node, [0])


def _field(name: str) -> str:
    if name.isidentifier() and name.isascii() and name not in _TOKENS_AFTER_DOT:
        return name
    if name and set(name) <= _BACKTICK_CHARS:
        return f"`{name}`"
    raise ValueError(f"field name {name!r} cannot be written in CEL")


def const_text(value: object) -> str:
    """A CEL literal for a constant value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Uint):
        return f"{int(value)}u"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".e") else text + ".0"
    if isinstance(value, str):
        return '"' + "".join(_char(c) for c in value) + '"'
    if isinstance(value, bytes):
        return 'b"' + "".join(_byte(b) for b in value) + '"'
    raise TypeError(f"not a CEL constant: {value!r}")


def _char(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    if c.isprintable():
        return c
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _byte(b: int) -> str:
    c = chr(b)
    if c in _ESCAPES:
        return _ESCAPES[c]
    return c if 0x20 <= b < 0x7F else f"\\x{b:02x}"


def dump(parsed: Parsed) -> str:
    """An indented listing of the tree that shows every node's id, for debugging and tests.

    >>> from kcel.parser import parse
    >>> print(dump(parse("a.b + 1")))
    _+_(
      a^#1.b^#2,
      1^#3
    )^#4
    """
    return _dump(parsed.expr, "")


def _dump(node: Expr, indent: str) -> str:
    inner = indent + "  "
    if isinstance(node, Const):
        return f"{const_text(node.value)}^#{node.id}"
    if isinstance(node, Ident):
        return f"{node.name}^#{node.id}"
    if isinstance(node, Select):
        suffix = "~test-only" if node.test_only else ""
        return f"{_dump(node.operand, indent)}.{node.field}{suffix}^#{node.id}"
    if isinstance(node, Call):
        head = f"{_dump(node.target, indent)}." if node.target is not None else ""
        if not node.args:
            return f"{head}{node.function}()^#{node.id}"
        args = ",\n".join(inner + _dump(a, inner) for a in node.args)
        return f"{head}{node.function}(\n{args}\n{indent})^#{node.id}"
    if isinstance(node, CreateList):
        marks = set(node.optional_indices)
        items = ",\n".join(inner + ("?" if i in marks else "") + _dump(e, inner) for i, e in enumerate(node.elements))
        return f"[\n{items}\n{indent}]^#{node.id}" if items else f"[]^#{node.id}"
    if isinstance(node, CreateMap):
        items = ",\n".join(
            f"{inner}{'?' if e.optional else ''}{_dump(e.key, inner)}:{_dump(e.value, inner)}^#{e.id}"
            for e in node.entries
        )
        return f"{{\n{items}\n{indent}}}^#{node.id}" if items else f"{{}}^#{node.id}"
    if isinstance(node, CreateStruct):
        items = ",\n".join(
            f"{inner}{'?' if f.optional else ''}{f.name}:{_dump(f.value, inner)}^#{f.id}" for f in node.fields
        )
        return f"{node.type_name}{{\n{items}\n{indent}}}^#{node.id}" if items else f"{node.type_name}{{}}^#{node.id}"
    variables = node.iter_var + (f", {node.iter_var2}" if node.iter_var2 else "")
    parts = [
        ("Variable", variables), ("Target", _dump(node.iter_range, inner)), ("Accumulator", node.accu_var),
        ("Init", _dump(node.accu_init, inner)), ("LoopCondition", _dump(node.loop_condition, inner)),
        ("LoopStep", _dump(node.loop_step, inner)), ("Result", _dump(node.result, inner)),
    ]  # fmt: skip
    body = ",\n".join(f"{inner}// {label}\n{inner}{text}" for label, text in parts)
    return f"__comprehension__(\n{body})^#{node.id}"
