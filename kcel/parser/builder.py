"""Builds the AST while lark parses: one callback per grammar rule or alias, no parse tree kept.

The builder also enforces cel-go's nesting limits as nodes are reduced, so a deeply nested
expression stops with a clean error long before anything recurses, and it collects the
non-fatal issues (reserved identifiers, bad literals, macro misuse) that cel-go reports
while still finishing the parse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from operator import itemgetter
from typing import Any

from lark import Token, Transformer

from kcel.errors import Issue
from kcel.parser import literals
from kcel.parser.ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    MapEntry,
    Select,
    StructField,
)
from kcel.parser.macros import Macro, MacroError

MAX_RECURSION_DEPTH = 250

RESERVED_IDENTIFIERS = frozenset(
    "as break const continue else false for function if import in let loop package "
    "namespace null return true var void while".split()
)
_LEXER_KEYWORDS = frozenset({"true", "false", "null", "in"})
# Keyed by terminal name: a plain-string key, where a lark Token key would compare through Token.__eq__.
_OPERATORS = {
    "EQ": "_==_", "NE": "_!=_", "IN": "@in", "LT": "_<_", "LE": "_<=_", "GE": "_>=_", "GT": "_>_",
    "PLUS": "_+_", "MINUS": "_-_", "STAR": "_*_", "SLASH": "_/_", "PERCENT": "_%_", "AND": "_&&_", "OR": "_||_",
}  # fmt: skip
_LEAF = (0, 0)  # the depths of a node without children


class LimitExceeded(Exception):
    """Nesting went past cel-go's recursion limits; the parse stops here."""


class Builder(Transformer[Token, Expr]):
    """Lark callbacks that turn reductions into AST nodes. One parse at a time."""

    __visit_tokens__ = False

    def reset(self, macros: Mapping[tuple[str, int, bool], Macro], lenient_code_points: bool = False) -> None:
        self.macros = macros
        self.lenient_code_points = lenient_code_points  # cel-go before v0.23 (literals.parse_string)
        self._id = count(1).__next__  # hands out 1, 2, 3, ...
        self.issues: list[Issue] = []
        self.macro_calls: dict[int, Call] = {}
        # id -> (cel-go visitor depth, expression nesting depth), checked against the limit.
        self.depth: dict[int, tuple[int, int]] = {}
        self.parenthesized: set[int] = set()
        self.signed: dict[int, Token] = {}  # literal id -> its NEG_INT/NEG_FLOAT token

    # -- helpers -----------------------------------------------------------------------

    def _track(self, node: Expr, same: Sequence[Expr] = (), nested: Sequence[Expr] = (), counted: bool = False) -> Expr:
        visits = nesting = 0
        depth = self.depth
        for child in same:
            v, n = depth[child.id]
            if v > visits:
                visits = v
            if n > nesting:
                nesting = n
        for child in nested:
            v, n = depth[child.id]
            if v > visits:
                visits = v
            if n >= nesting:
                nesting = n + 1
        if counted:
            visits += 1
            if visits > MAX_RECURSION_DEPTH:
                raise LimitExceeded("max recursion depth exceeded")
        if nesting >= MAX_RECURSION_DEPTH:
            raise LimitExceeded(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        depth[node.id] = (visits, nesting)
        return node

    def _error(self, message: str, offset: int) -> Expr:
        self.issues.append(Issue(message, offset))
        node = Const(self._id(), offset, offset, offset, None)
        self.depth[node.id] = _LEAF
        return node

    def _literal(self, token: Token, value: Any) -> Expr:
        node = Const(self._id(), token.start_pos, token.end_pos, token.start_pos, value)  # type: ignore[arg-type]
        self.depth[node.id] = _LEAF
        return node

    def _parsed_literal(self, token: Token, parse: Any) -> Expr:
        try:
            value = parse(token)
        except literals.LiteralError as err:
            return self._error(str(err), token.start_pos)  # type: ignore[arg-type]
        return self._literal(token, value)

    def _call(self, name: str, args: tuple[Expr, ...], target: Expr | None, pos: int, start: int, end: int) -> Expr:
        receiver = target is not None
        macro = self.macros.get((name, len(args), receiver)) or self.macros.get((name, -1, receiver))
        if macro is not None:
            factory = _Factory(self, pos)
            try:
                expanded = macro.expand(factory, target, args)
            except MacroError as err:
                return self._error(err.message, err.node.pos)
            if expanded is not None:
                original = Call(self._id(), start, end, pos, name, args, target)
                self.macro_calls[expanded.id] = original
                return expanded
        return Call(self._id(), start, end, pos, name, args, target)

    # -- callbacks, named by the grammar's rules and aliases ------------------------------

    # The rules that pass their one child up take almost half of all reductions; a C-level
    # itemgetter is cheaper per call than lark's `?rule` inlining wrapper or a method.
    start = expr = or_expr = or_operand = and_operand = staticmethod(itemgetter(0))
    addition_operand = multiplication_operand = field_name = staticmethod(itemgetter(0))

    def conditional(self, c: list[Any]) -> Expr:
        cond, question, then, _, other = c
        node = Call(self._id(), cond.start, other.end, question.start_pos, "_?_:_", (cond, then, other))
        return self._track(node, same=(cond, then), nested=(other,), counted=True)

    def logic_chain(self, c: list[Any]) -> Expr:
        terms, ops = c[0::2], c[1::2]
        return self._balance(terms, ops, 0, len(ops) - 1)

    def _balance(self, terms: list[Expr], ops: list[Token], lo: int, hi: int) -> Expr:
        mid = (lo + hi + 1) // 2
        left = terms[mid] if mid == lo else self._balance(terms, ops, lo, mid - 1)
        right = terms[mid + 1] if mid == hi else self._balance(terms, ops, mid + 1, hi)
        op = ops[mid]
        node = Call(self._id(), left.start, right.end, op.start_pos, _OPERATORS[op.type], (left, right))  # type: ignore[arg-type]
        return self._track(node, same=(left, right))

    def binary(self, c: list[Any]) -> Expr:
        left, op, right = c
        node = Call(self._id(), left.start, right.end, op.start_pos, _OPERATORS[op.type], (left, right))
        return self._track(node, same=(left, right), counted=True)

    def logical_not(self, c: list[Any]) -> Expr:
        return self._unary(c, "!_")

    def negate(self, c: list[Any]) -> Expr:
        # `--1`: ANTLR lexes no signed number there, so the sign is one more `-` of the run
        token = self.signed.get(c[-1].id)
        if token is not None and c[-1].id not in self.parenthesized:
            start = token.start_pos or 0
            digits = len(token) - len(token.lstrip("-").lstrip())
            unsigned = Token(token.type.replace("NEG_", "NUM_"), token[digits:], start_pos=start + digits)
            unsigned.end_pos = token.end_pos
            parse = literals.parse_int if token.type == "NEG_INT" else literals.parse_double
            c = [*c[:-1], Token("MINUS", "-", start_pos=start), self._parsed_literal(unsigned, parse)]
        return self._unary(c, "-_")

    def _unary(self, c: list[Any], function: str) -> Expr:
        operand: Expr = c[-1]
        if len(c) % 2 == 1:  # an even number of `!` or `-` cancels out, as in cel-go
            return operand
        first = c[0]
        node = Call(self._id(), first.start_pos, operand.end, first.start_pos, function, (operand,))
        return self._track(node, same=(operand,))

    def select(self, c: list[Any]) -> Expr:
        operand, dot, name = c
        field = self._field_name(name)
        node = Select(self._id(), operand.start, name.end_pos, dot.start_pos, operand, field, False)
        return self._track(node, same=(operand,), counted=True)

    def opt_select(self, c: list[Any]) -> Expr:
        operand, dot, _, name = c
        field = self._literal(name, self._field_name(name))
        node = Call(self._id(), operand.start, name.end_pos, dot.start_pos, "_?._", (operand, field))
        return self._track(node, same=(operand,), counted=True)

    def _field_name(self, token: Token) -> str:
        if token.type == "ESC_IDENT":
            return token[1:-1]
        if token in _LEXER_KEYWORDS:  # the contextual lexer lets these through after a `.`
            self.issues.append(Issue(f"Syntax error: mismatched input '{token}' expecting IDENTIFIER", token.start_pos))  # type: ignore[arg-type]
        return str(token)

    def member_call(self, c: list[Any]) -> Expr:
        target, _, name, lparen, args, rparen = c
        self._field_name(name)
        arg_nodes = self._args(args)
        node = self._call(str(name), arg_nodes, target, lparen.start_pos, target.start, rparen.end_pos)
        return self._track(node, same=(target,), nested=arg_nodes, counted=True)

    def global_call(self, c: list[Any]) -> Expr:
        dot = c[0] if c[0].type == "DOT" else None
        name, lparen, args, rparen = c[-4:]
        if name in RESERVED_IDENTIFIERS:
            return self._error(f"reserved identifier: {name}", (dot or name).start_pos)
        function = ("." if dot else "") + str(name)
        arg_nodes = self._args(args)
        start = (dot or name).start_pos
        node = self._call(function, arg_nodes, None, lparen.start_pos, start, rparen.end_pos)
        return self._track(node, nested=arg_nodes)

    def _args(self, args: list[Any] | None) -> tuple[Expr, ...]:
        return () if args is None else tuple(args[0::2])

    def args(self, c: list[Any]) -> list[Any]:
        return c

    def index(self, c: list[Any]) -> Expr:
        target, lbracket, key, rbracket = c
        node = Call(self._id(), target.start, rbracket.end_pos, lbracket.start_pos, "_[_]", (target, key))
        return self._track(node, same=(target,), nested=(key,), counted=True)

    def opt_index(self, c: list[Any]) -> Expr:
        target, lbracket, _, key, rbracket = c
        node = Call(self._id(), target.start, rbracket.end_pos, lbracket.start_pos, "_[?_]", (target, key))
        return self._track(node, same=(target,), nested=(key,), counted=True)

    def ident(self, c: list[Any]) -> Expr:
        name = c[-1]
        if name in RESERVED_IDENTIFIERS:
            return self._error(f"reserved identifier: {name}", c[0].start_pos)
        text = "." + name if len(c) == 2 else str(name)
        node = Ident(self._id(), c[0].start_pos, name.end_pos, name.start_pos, text)
        self.depth[node.id] = _LEAF
        return node

    def nested(self, c: list[Any]) -> Expr:
        inner: Expr = c[1]
        visits, nesting = self.depth[inner.id]
        if nesting + 1 >= MAX_RECURSION_DEPTH:
            raise LimitExceeded(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        self.depth[inner.id] = (visits, nesting + 1)
        self.parenthesized.add(inner.id)
        return inner

    def create_list(self, c: list[Any]) -> Expr:
        lbracket, elems, rbracket = c[0], c[1], c[-1]
        items: list[tuple[Token | None, Expr]] = [] if elems is None else elems
        values = tuple(value for _, value in items)
        optional = tuple(i for i, (mark, _) in enumerate(items) if mark is not None)
        node = CreateList(self._id(), lbracket.start_pos, rbracket.end_pos, lbracket.start_pos, values, optional)
        return self._track(node, nested=values)

    def list_elems(self, c: list[Any]) -> list[tuple[Token | None, Expr]]:
        items, mark, (value,) = _items(c, 1)
        items.append((mark, value))
        return items

    def create_map(self, c: list[Any]) -> Expr:
        lbrace, entries, rbrace = c[0], c[1], c[-1]
        items: tuple[MapEntry, ...] = () if entries is None else tuple(entries)
        node = CreateMap(self._id(), lbrace.start_pos, rbrace.end_pos, lbrace.start_pos, items)
        return self._track(node, nested=[x for e in items for x in (e.key, e.value)])

    def map_inits(self, c: list[Any]) -> list[MapEntry]:
        entries, mark, (key, colon, value) = _items(c, 3)
        entries.append(MapEntry(self._id(), key.start, value.end, colon.start_pos, key, value, mark is not None))
        return entries

    def create_struct(self, c: list[Any]) -> Expr:
        target, lbrace, inits, rbrace = c[0], c[1], c[2], c[-1]
        fields: tuple[StructField, ...] = () if inits is None else tuple(inits)
        name = self._qualified_name(target)
        if name is None:
            return self._error("expected a qualified message name before '{'", lbrace.start_pos)
        node = CreateStruct(self._id(), target.start, rbrace.end_pos, lbrace.start_pos, name, fields)
        return self._track(node, nested=[f.value for f in fields])

    def _qualified_name(self, node: Expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, Select) and not node.test_only and node.id not in self.parenthesized:
            if not node.field.isidentifier():
                return None
            parts.append(node.field)
            node = node.operand
        if not isinstance(node, Ident) or node.id in self.parenthesized:
            return None
        parts.append(node.name)
        return ".".join(reversed(parts))

    def field_inits(self, c: list[Any]) -> list[StructField]:
        fields, mark, (name, colon, value) = _items(c, 3)
        field = StructField(
            self._id(), name.start_pos, value.end, colon.start_pos, self._field_name(name), value, mark is not None
        )
        fields.append(field)
        return fields

    def int_literal(self, c: list[Token]) -> Expr:
        return self._signed(c[0], self._parsed_literal(c[0], literals.parse_int))

    def _signed(self, token: Token, node: Expr) -> Expr:
        """Remember a literal lexed with its sign, which a run of `-` before it takes back (see `negate`)."""
        if token.type.startswith("NEG_"):
            self.signed[node.id] = token
        return node

    def uint_literal(self, c: list[Token]) -> Expr:
        return self._parsed_literal(c[0], literals.parse_uint)

    def double_literal(self, c: list[Token]) -> Expr:
        return self._signed(c[0], self._parsed_literal(c[0], literals.parse_double))

    def string_literal(self, c: list[Token]) -> Expr:
        return self._parsed_literal(c[0], lambda token: literals.parse_string(token, self.lenient_code_points))

    def bytes_literal(self, c: list[Token]) -> Expr:
        return self._parsed_literal(c[0], literals.parse_bytes)

    def bool_literal(self, c: list[Token]) -> Expr:
        return self._literal(c[0], c[0].type == "TRUE")

    def null_literal(self, c: list[Token]) -> Expr:
        return self._literal(c[0], None)


def _items(c: list[Any], width: int) -> tuple[list[Any], Token | None, list[Any]]:
    """Split a reduction of `items: QMARK? item | items COMMA QMARK? item`, `item` being `width`
    symbols long, into the list so far, the item's `?` (or None) and the item's own children."""
    extra = len(c) - width  # 0: first item, 1: first item with `?`, 2: a later one, 3: with `?`
    items = c[0] if extra >= 2 else []
    mark = c[extra - 1] if extra % 2 else None
    return items, mark, c[extra:]


class _Factory:
    """Makes the nodes of a macro expansion: fresh ids, all placed at the macro call."""

    def __init__(self, builder: Builder, pos: int) -> None:
        self.builder = builder
        self.pos = pos

    def _new(self, cls: Any, *fields: Any, **named: Any) -> Any:
        b, pos = self.builder, self.pos
        node = cls(b._id(), pos, pos, pos, *fields, **named)
        b.depth[node.id] = _LEAF
        return node

    def const(self, value: object) -> Const:
        return self._new(Const, value)  # type: ignore[no-any-return]

    def ident(self, name: str) -> Ident:
        return self._new(Ident, name)  # type: ignore[no-any-return]

    def call(self, function: str, *args: Expr, target: Expr | None = None) -> Call:
        return self._new(Call, function, args, target)  # type: ignore[no-any-return]

    def list(self, *elements: Expr) -> CreateList:
        return self._new(CreateList, elements)  # type: ignore[no-any-return]

    def map(self) -> CreateMap:
        return self._new(CreateMap)  # type: ignore[no-any-return]

    def select(self, operand: Expr, field: str, test_only: bool) -> Select:
        return self._new(Select, operand, field, test_only)  # type: ignore[no-any-return]

    def fold(self, **parts: Any) -> Comprehension:
        return self._new(Comprehension, **parts)  # type: ignore[no-any-return]
