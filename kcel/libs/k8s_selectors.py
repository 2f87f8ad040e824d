"""Label and field selectors, parsed as apimachinery's `labels.ParseToRequirements` and `fields.ParseSelector`.

The authorizer library's `fieldSelector()`/`labelSelector()` take them, RBAC aggregation rules and
admission bindings match with them; error texts are Go's. Label keys and values are checked with
the format library's apimachinery validators (`kcel.libs.k8s_format`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kcel.libs.k8s_format import label_key_errors, label_value_errors
from kcel.temporal import go_quote
from kcel.values import decimal_int

__all__ = [
    "FieldRequirement", "LabelRequirement", "SelectorError", "aggregate_errors", "new_label_requirement",
    "parse_field_selector", "parse_label_selector",
]  # fmt: skip


class SelectorError(ValueError):
    """A selector that does not parse; `str()` is apimachinery's error text."""


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One term of a field selector (fields.Requirement); `operator` is "=" or "!="."""

    field: str
    operator: str
    value: str


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One requirement of a label selector (labels.Requirement).

    `operator` is Go's selection.Operator text: "=", "==", "!=", "in", "notin", "exists", "!",
    "gt" or "lt"; `values` are sorted, as `sets.String.List()` returns them.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """labels.Requirement.Matches: whether a set of labels satisfies the requirement."""
        present = self.key in labels
        if self.operator in ("in", "=", "=="):
            return present and labels[self.key] in self.values
        if self.operator in ("notin", "!="):
            return not present or labels[self.key] not in self.values
        if self.operator in ("exists", "!"):
            return present == (self.operator == "exists")
        if self.operator in ("gt", "lt") and present and len(self.values) == 1:
            have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if self.operator == "gt" else have < want
        return False


def _invalid(path: str, value: str, detail: str) -> str:
    """field.Invalid(...).Error() for a string value."""
    return f"{path}: Invalid value: {go_quote(value)}: {detail}"


def aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.Aggregate's Error(): one message alone, several as `[a, b]`, duplicates dropped."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


_INT64_RE = re.compile(r"[+-]?[0-9]+")


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), None on failure."""
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = decimal_int(text)
    return value if -(1 << 63) <= value < 1 << 63 else None


_BINARY_OPERATORS = ("in", "notin", "=", "==", "!=", "gt", "lt")


def new_label_requirement(key: str, operator: str, values: Sequence[str]) -> LabelRequirement:
    """labels.NewRequirement: validate key, operator arity and values; raises SelectorError.

    Paths are rendered as Go renders them for a requirement built without a path option.
    """
    errors = []
    if key_problems := label_key_errors(key):
        errors.append(_invalid("key", key, "; ".join(key_problems)))
    errors += _operator_errors(operator, values)
    for i, value in enumerate(values):
        if problems := label_value_errors(value):
            errors.append(_invalid(f"values[{i}][{key}]", value, "; ".join(problems)))
    if errors:
        raise SelectorError(aggregate_errors(errors))
    return LabelRequirement(key, operator, tuple(values))


def _operator_errors(operator: str, values: Sequence[str]) -> list[str]:
    """The arity checks of NewRequirement, and integer values for gt/lt."""
    if operator in ("in", "notin"):
        ok, detail = bool(values), "for 'in', 'notin' operators, values set can't be empty"
    elif operator in ("=", "==", "!="):
        ok, detail = len(values) == 1, "exact-match compatibility requires one single value"
    elif operator in ("exists", "!"):
        ok, detail = not values, "values set must be empty for exists and does not exist"
    elif operator in ("gt", "lt"):
        ok, detail = len(values) == 1, "for 'Gt', 'Lt' operators, exactly one value is required"
    else:
        supported = ", ".join(go_quote(op) for op in (*_BINARY_OPERATORS, "exists", "!"))
        return [f"operator: Unsupported value: {go_quote(operator)}: supported values: {supported}"]
    errors = [] if ok else [_invalid_list(values, detail)]
    if operator in ("gt", "lt"):
        detail = "for 'Gt', 'Lt' operators, the value must be an integer"
        errors += [_invalid(f"values[{i}]", v, detail) for i, v in enumerate(values) if _parse_int64(v) is None]
    return errors


def _invalid_list(values: Sequence[str], detail: str) -> str:
    """field.Invalid with a []string bad value, which Go renders as JSON."""
    rendered = "null" if not values else "[" + ",".join(_json_string(v) for v in values) + "]"
    return f"values: Invalid value: {rendered}: {detail}"


def _json_string(text: str) -> str:
    """encoding/json's string form: HTML-sensitive characters escaped."""
    return json.dumps(text, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- field selectors (fields.ParseSelector) ----------------------------------------------------------


def parse_field_selector(selector: str) -> tuple[FieldRequirement, ...]:
    """fields.ParseSelector(selector).Requirements(); raises SelectorError with Go's text.

    Terms are comma-separated (`\\,` escapes a comma), sorted, and split at the first `!=`, `==`
    or `=`; a term whose field and value are both empty selects everything and is dropped.

    >>> [(r.field, r.operator, r.value) for r in parse_field_selector("spec.nodeName=node-1,metadata.name!=a")]
    [('metadata.name', '!=', 'a'), ('spec.nodeName', '=', 'node-1')]
    """
    requirements = []
    for term in sorted(_split_terms(selector)):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{selector}'; can't understand '{term}'")
        lhs, operator, rhs = split
        value = _unescape_value(rhs)
        if lhs or value:
            requirements.append(FieldRequirement(lhs, "!=" if operator == "!=" else "=", value))
    return tuple(requirements)


def _split_terms(selector: str) -> list[str]:
    """fields.splitTerms: split at commas not escaped by a backslash (the backslash is kept)."""
    if not selector:
        return []
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(selector):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """fields.splitTerm: the left side, operator and raw right side at the first operator found."""
    for i in range(len(term)):
        for operator in ("!=", "==", "="):
            if term.startswith(operator, i):
                return term[:i], operator, term[i + len(operator) :]
    return None


def _unescape_value(text: str) -> str:
    """fields.UnescapeValue: `\\\\`, `\\,` and `\\=` are escapes; bare `,` or `=` is an error."""
    if not any(ch in text for ch in "\\,="):
        return text
    out, escaped = [], False
    for ch in text:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


# -- label selectors (labels.ParseToRequirements) -----------------------------------------------------

_END, _ID, _ERROR = "end", "identifier", "error"
_KEYWORDS = {")": ")", ",": ",", "!": "!", "==": "==", "=": "=", ">": ">", "in": "in", "<": "<", "!=": "!=",
             "notin": "notin", "(": "("}  # fmt: skip
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_NUL = "\x00"


class _Lexer:
    """labels.Lexer. Go reads bytes and uses 0 for the end, so a NUL in the text also ends a token."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self) -> str:
        if self.pos < len(self.text):
            self.pos += 1
            return self.text[self.pos - 1]
        return _NUL

    def lex(self) -> tuple[str, str]:
        ch = self.read()
        while ch in _WHITESPACE:
            ch = self.read()
        if ch == _NUL:
            return _END, ""
        self.pos -= 1
        return self.scan_special() if ch in _SPECIAL else self.scan_word()

    def scan_word(self) -> tuple[str, str]:
        """An identifier or the keywords `in`/`notin`: everything up to a special character or blank."""
        buffer = []
        while (ch := self.read()) != _NUL:
            if ch in _SPECIAL or ch in _WHITESPACE:
                self.pos -= 1
                break
            buffer.append(ch)
        word = "".join(buffer)
        return _KEYWORDS.get(word, _ID), word

    def scan_special(self) -> tuple[str, str]:
        """The longest operator made of special characters (`!=` rather than `!`)."""
        buffer, found = "", ""
        while (ch := self.read()) != _NUL:
            if ch not in _SPECIAL:
                self.pos -= 1
                break
            buffer += ch
            if buffer in _KEYWORDS:
                found = buffer
            elif found:
                self.pos -= 1
                break
        if not found:
            return _ERROR, f"error expected: keyword found '{buffer}'"
        return _KEYWORDS[found], found


class _LabelParser:
    """labels.Parser: a recursive-descent parser over the scanned tokens."""

    def __init__(self, text: str) -> None:
        lexer = _Lexer(text)
        self.items: list[tuple[str, str]] = []
        while True:
            item = lexer.lex()
            self.items.append(item)
            if item[0] == _END:
                break
        self.position = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        token, literal = self.items[min(self.position, len(self.items) - 1)]
        return (_ID if values and token in ("in", "notin") else token), literal

    def consume(self, values: bool = True) -> tuple[str, str]:
        item = self.lookahead(values)
        self.position += 1
        return item

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            token, literal = self.lookahead()
            if token == _END:
                return requirements
            if token not in (_ID, "!"):
                raise SelectorError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            token, literal = self.consume()
            if token == _END:
                return requirements
            if token != ",":
                raise SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            following, literal = self.lookahead()
            if following not in (_ID, "!"):
                raise SelectorError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> LabelRequirement:
        key, operator = self.key_and_inferred_operator()
        if operator in ("exists", "!"):
            return new_label_requirement(key, operator, [])
        operator = self.operator()
        values = self.value_set() if operator in ("in", "notin") else self.exact_value()
        return new_label_requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, str]:
        operator = ""
        token, literal = self.consume()
        if token == "!":
            operator = "!"
            token, literal = self.consume()
        if token != _ID:
            raise SelectorError(f"found '{literal}', expected: identifier")
        if problems := label_key_errors(literal):
            raise SelectorError(_invalid("<nil>", literal, "; ".join(problems)))
        if self.lookahead()[0] in (_END, ",") and operator != "!":
            operator = "exists"
        return literal, operator

    def operator(self) -> str:
        token, literal = self.consume(values=False)
        operators = {"in": "in", "=": "=", "==": "==", ">": "gt", "<": "lt", "notin": "notin", "!=": "!="}
        if token not in operators:
            raise SelectorError(f"found '{literal}', expected: {', '.join(_BINARY_OPERATORS)}")
        return operators[token]

    def value_set(self) -> set[str]:
        token, literal = self.consume()
        if token != "(":
            raise SelectorError(f"found '{literal}' expected: '('")
        token, literal = self.lookahead()
        if token == ")":
            self.consume()
            return {""}
        if token not in (_ID, ","):
            raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.consume()[0] != ")":
            raise SelectorError(f"found '{literal}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        """A comma-separated list inside parentheses; empty items stand for the empty value."""
        values: set[str] = set()
        while True:
            token, literal = self.consume()
            if token == _ID:
                values.add(literal)
                following, literal = self.lookahead()
                if following == ")":
                    return values
                if following != ",":
                    raise SelectorError(f"found '{literal}', expected: ',' or ')'")
            elif token == ",":
                following = self.lookahead()[0]
                if not values or following in (")", ","):
                    values.add("")
                if following == ")":
                    return values
            else:
                raise SelectorError(f"found '{literal}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_END, ","):
            return {""}
        token, literal = self.consume()
        if token != _ID:
            raise SelectorError(f"found '{literal}', expected: identifier")
        return {literal}


def parse_label_selector(selector: str) -> tuple[LabelRequirement, ...]:
    """labels.ParseToRequirements: requirements sorted by key; raises SelectorError with Go's text.

    >>> [(r.key, r.operator, r.values) for r in parse_label_selector("tier in (web, api),!canary")]
    [('canary', '!', ()), ('tier', 'in', ('api', 'web'))]
    """
    requirements = _LabelParser(selector).parse()
    return tuple(sorted(requirements, key=lambda r: r.key))
