"""A marker's arguments read as controller-tools reads them (pkg/markers/parse.go over Go's text/scanner):
strings quoted with `"` or a backquote or left bare up to the next `,` `;` `}`, ints, floats, bools, lists as
`{a,b}` or `a;b`, maps as `{k: v}`, and untyped values whose type is guessed from the text.

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
Strings keep the offset of each character in the marker, so that a rule's error can point inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kcel.k8s.gotypes.syntax import literal_characters

EOF = ""
_WHITESPACE = " \t\n\r"


class MarkerSyntaxError(ValueError):
    """Arguments the marker grammar rejects (controller-gen's message; the reason without its place, and the
    offset in the arguments it was found at, when the scanner found it)."""

    def __init__(self, message: str, reason: str = "", offset: int = -1) -> None:
        super().__init__(message)
        self.reason, self.offset = reason or message, offset


@dataclass(frozen=True)
class ArgumentReading:
    """How one `name=value` of a marker was read: where its value is in the arguments, whether it was a Go string
    (quoted or raw), and for a bare one the delimiter that ended it ("" at the end)."""

    name: str
    start: int
    end: int
    quoted: bool
    stop: str


@dataclass(frozen=True)
class Argument:
    """An argument's type: int, number, string, bool, any (guessed), slice or map (of `item`)."""

    kind: str
    item: Argument | None = None
    optional: bool = False


class _Scanner:
    """Go's text/scanner in the mode controller-tools sets: identifiers, numbers (unless turned off), strings and
    raw strings are tokens; any other character is a token of its own; whitespace between them is skipped."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0  # the next unread character
        self.token_start = 0
        self.token = ""
        self.numbers = True
        self.errors: list[str] = []
        self.failures: list[tuple[str, int]] = []  # (reason, offset) of each error

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else EOF

    def peek_no_space(self) -> str:
        while self.peek() != EOF and self.peek() in _WHITESPACE:
            self.pos += 1
        return self.peek()

    def error(self, message: str) -> None:
        self.errors.append(f"{message} (at <input>:1:{self.pos + 1})")
        self.failures.append((message, self.pos))

    def scan(self) -> str:
        """The next token's kind: ident, int, float, string, rawstring, EOF, or the character itself."""
        self.peek_no_space()
        start = self.token_start = self.pos
        text = self.text
        if start >= len(text):
            self.token = ""
            return EOF
        char = text[start]
        kind = char
        if char == "_" or char.isalpha():
            end = start + 1
            while end < len(text) and (text[end] == "_" or text[end].isalnum()):
                end += 1
            kind = "ident"
        elif self.numbers and (char.isdigit() or (char == "." and text[start + 1 : start + 2].isdigit())):
            end, kind = _number_end(text, start)
        elif char == '"':
            end = start + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                self.pos = len(text)
                self.error("literal not terminated")
                end = len(text) - 1
            end += 1
            kind = "string"
        elif char == "`":
            end = text.find("`", start + 1)
            if end < 0:
                self.pos = len(text)
                self.error("literal not terminated")
                end = len(text) - 1
            end += 1
            kind = "rawstring"
        else:
            end = start + 1
        self.pos = min(end, len(text))
        self.token = text[start : self.pos]
        return kind

    def expect(self, kind: str, description: str) -> bool:
        found = self.scan()
        if found != kind:
            self.error(f"expected {description}, got {go_quote(self.token)}")
            return False
        return True


def _number_end(text: str, start: int) -> tuple[int, str]:
    end, kind = start, "int"
    if text[start : start + 2].lower() in ("0x", "0o", "0b"):
        end = start + 2
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        return end, kind
    while end < len(text) and (text[end].isdigit() or text[end] == "_"):
        end += 1
    if end < len(text) and text[end] == ".":
        kind, end = "float", end + 1
        while end < len(text) and (text[end].isdigit() or text[end] == "_"):
            end += 1
    if end < len(text) and text[end] in "eE":
        after = end + 1 + (1 if text[end + 1 : end + 2] in ("+", "-") and text[end + 1 : end + 2] else 0)
        if after < len(text) and text[after].isdigit():
            kind, end = "float", after
            while end < len(text) and text[end].isdigit():
                end += 1
    return end, kind


def go_quote(text: str) -> str:
    """Go's %q of a short token (the marker errors quote what they found)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def parse_arguments(fields: str, arguments: dict[str, Argument],
                    readings: list[ArgumentReading] | None = None) -> tuple[Any, dict[str, list[int]]]:  # fmt: skip
    """A marker's value from the text after its name (`rule="...",message="..."`, `=5`, or nothing), and the
    offset in `fields` of each character of each string argument; `readings`, when given, gets how each named
    argument was read (up to an error too).

    Raises:
        MarkerSyntaxError: the first error, as controller-gen words it.
    """
    scanner = _Scanner(fields)
    positions: dict[str, list[int]] = {}
    seen: set[str] = set()
    value: Any = None
    if list(arguments) == [""]:
        if scanner.peek() != EOF:
            value = _parse(arguments[""], scanner, positions, "", in_slice=False)
            seen.add("")
    elif arguments:
        value = {}
        if scanner.peek() != EOF:
            while scanner.expect("ident", "argument name"):
                name = scanner.token
                if not scanner.expect("=", "equals"):
                    break
                if name not in arguments:
                    scanner.error(f"unknown argument {go_quote(name)}")
                    break
                seen.add(name)
                start = len(fields) - len(fields[scanner.pos :].lstrip(_WHITESPACE))
                quoted = fields[start : start + 1] in ('"', "`")
                value[name] = _parse(arguments[name], scanner, positions, name, in_slice=False)
                if readings is not None:
                    readings.append(ArgumentReading(name, start, scanner.pos, quoted,
                                                    "" if quoted else scanner.peek_no_space()))  # fmt: skip
                if scanner.errors or scanner.peek() == EOF:
                    break
                if not scanner.expect(",", "comma"):
                    break
    if scanner.scan() != EOF:
        scanner.error(f"extra arguments provided: {go_quote(fields[scanner.token_start :])}")
    for name, argument in arguments.items():
        if name not in seen and not argument.optional:
            scanner.error(f"missing argument {go_quote(name)}")
    if scanner.errors:
        raise MarkerSyntaxError(scanner.errors[0], *scanner.failures[0])
    return value, positions


def _parse(argument: Argument, scanner: _Scanner, positions: dict[str, list[int]], name: str, in_slice: bool) -> Any:
    kind = argument.kind
    if kind in ("number", "int"):
        negative = scanner.peek() == "-"
        if negative:
            scanner.scan()
        found = scanner.scan()
        text = ("-" if negative else "") + scanner.token
        if kind == "int":
            if found != "int":
                scanner.error(f"expected integer, got {go_quote(scanner.token)}")
                return 0
            try:
                return int(text.replace("_", ""), 10)
            except ValueError:
                scanner.error(f"unable to parse integer: strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
                return 0
        if found not in ("int", "float"):
            scanner.error(f"expected integer or float, got {go_quote(scanner.token)}")
            return 0.0
        try:
            return (
                float(text.replace("_", "")) if not text.lstrip("-").lower().startswith("0x") else float(int(text, 16))
            )
        except ValueError:
            scanner.error(f"unable to parse number: {text}")
            return 0.0
    if kind == "string":
        return _parse_string(scanner, positions, name, in_map=False)
    if kind == "bool":
        if not scanner.expect("ident", "true or false"):
            return False
        if scanner.token not in ("true", "false"):
            scanner.error(f"expected true or false, got {go_quote(scanner.token)}")
            return False
        return scanner.token == "true"
    if kind == "any":
        guessed = _guess(scanner, allow_slice=not in_slice)
        return _parse(guessed, scanner, positions, name, in_slice)
    if kind == "slice":
        assert argument.item is not None
        return _parse_slice(argument.item, scanner, positions, name)
    if kind == "map":
        assert argument.item is not None
        return _parse_map(argument.item, scanner, positions, name)
    scanner.error("cannot parse invalid type")
    return None


def _parse_string(scanner: _Scanner, positions: dict[str, list[int]], name: str, in_map: bool) -> str:
    scanner.numbers = False
    try:
        found = scanner.scan()
        if found in ("string", "rawstring"):
            characters, problem = literal_characters(scanner.token, scanner.token_start)
            if problem:
                scanner.error(f"unable to parse string: {problem}")
                return ""
            if name and name not in positions:
                positions[name] = [offset for _, offset in characters]
            return "".join(c for c, _ in characters)
        start = scanner.token_start
        end = scanner.token_start + len(scanner.token)
        while not _delimiter(scanner.peek_no_space(), in_map):
            scanner.scan()
            end = scanner.token_start + len(scanner.token)
        if name and name not in positions:
            positions[name] = list(range(start, end))
        return scanner.text[start:end]
    finally:
        scanner.numbers = True


def _delimiter(hint: str, in_map: bool) -> bool:
    """Where a bare string ends: v0.21.0 stops at a `:` anywhere (later versions only inside a map)."""
    del in_map
    return hint in (",", ";", ":", "}", EOF)


def _parse_slice(item: Argument, scanner: _Scanner, positions: dict[str, list[int]], name: str) -> list[Any]:
    found: list[Any] = []
    if scanner.peek_no_space() == "{":
        scanner.scan()
        while scanner.peek_no_space() not in ("}", EOF):
            found.append(_parse(item, scanner, positions, "", in_slice=True))
            if scanner.peek_no_space() == "}":
                break
            if not scanner.expect(",", "comma"):
                return found
        scanner.expect("}", "close curly brace")
        return found
    while scanner.peek_no_space() not in (",", "}", EOF):
        found.append(_parse(item, scanner, positions, "", in_slice=True))
        hint = scanner.peek_no_space()
        if hint in (",", "}", EOF):
            break
        scanner.scan()
        if hint != ";":
            scanner.error(f"expected comma, got {go_quote(scanner.token)}")
            return found
        if scanner.errors:
            break
    return found


def _parse_map(item: Argument, scanner: _Scanner, positions: dict[str, list[int]], name: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if not scanner.expect("{", "open curly brace"):
        return found
    while scanner.peek_no_space() not in ("}", EOF):
        key = _parse_string(scanner, positions, "", in_map=True)
        if not scanner.expect(":", "colon"):
            return found
        found[key] = _parse(item, scanner, positions, "", in_slice=False)
        if scanner.peek_no_space() == "}":
            break
        if not scanner.expect(",", "comma"):
            return found
    scanner.expect("}", "close curly brace")
    return found


def _guess(scanner: _Scanner, allow_slice: bool) -> Argument:
    """guessType: the type the text at the scanner looks like (a `;` before the next `,` makes a list)."""
    if allow_slice:
        item = _guess(scanner, allow_slice=False)
        ahead = _Scanner(scanner.text[scanner.pos :])
        while (token := ahead.scan()) not in (",", EOF, ";"):
            pass
        return Argument("slice", item) if token == ";" else item
    ahead = _Scanner(scanner.text[scanner.pos :])
    hint = ahead.peek_no_space()
    if hint in ('"', "'", "`"):
        return Argument("string")
    if hint == "{":
        ahead.scan()
        hint = ahead.peek_no_space()
        first = _guess(ahead, allow_slice=False)
        if first.kind == "string":
            _parse_string(ahead, {}, "", in_map=True)
            if ahead.scan() == ":" or hint == "}":
                return Argument("map", Argument("any"))
        return Argument("slice", first)
    if hint in ("t", "f"):
        if ahead.scan() == "ident":
            if ahead.token in ("true", "false"):
                return Argument("bool")
            return Argument("string")
    token = ahead.scan()
    if token == "-":
        token = ahead.scan()
    if token in ("int", "float"):  # v0.21.0: a number at the start makes a number, whatever follows it
        return Argument("int" if token == "int" else "number")
    return Argument("string")
