"""What an authorizer is asked and answers (k8s.io/apiserver authorizer.Attributes and Decision), with selector parsing.

The CEL `authorizer` variable calls an object the embedding application supplies; this module is
the contract between the two. `Attributes` mirrors Go's `authorizer.AttributesRecord`, `Decision`
the `(Decision, reason, error)` triple an `Authorize` call returns. Field and label selectors
given to `fieldSelector()`/`labelSelector()` are parsed here exactly as apimachinery's
`fields.ParseSelector` and `labels.ParseToRequirements` do, error texts included.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kcel.temporal import go_quote

__all__ = [
    "AlwaysAllow", "AlwaysDeny", "Attributes", "Authorizer", "Decision", "FieldRequirement", "LabelRequirement",
    "SelectorError", "UserInfo", "Verdict", "aggregate_errors", "new_label_requirement", "parse_field_selector",
    "parse_label_selector", "service_account_user",
]  # fmt: skip


# -- the request ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserInfo:
    """The requesting user (Go's `user.Info`): groups are what RBAC Group subjects match against."""

    name: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def service_account_user(namespace: str, name: str) -> UserInfo:
    """The user a service account token authenticates as (serviceaccount.ServiceAccountInfo.UserInfo).

    Like Go, the groups do not include `system:authenticated`; the authenticator adds that one.

    >>> service_account_user("default", "builder").name
    'system:serviceaccount:default:builder'
    """
    groups = (ALL_SERVICE_ACCOUNTS_GROUP, f"{ALL_SERVICE_ACCOUNTS_GROUP}:{namespace}")
    return UserInfo(name=f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", groups=groups)


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


@dataclass(frozen=True, slots=True)
class Attributes:
    """One authorization question (authorizer.AttributesRecord).

    A resource check sets `resource_request` and the API fields (CEL checks always use API
    version "*"); a path check sets `path`. A selector that was not given is None; one that failed
    to parse is None with its parse error in `*_selector_error`, which the authorizer may act on.
    """

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: tuple[FieldRequirement, ...] | None = None
    field_selector_error: str | None = None
    label_selector: tuple[LabelRequirement, ...] | None = None
    label_selector_error: str | None = None


# -- the answer ----------------------------------------------------------------------------------


class Verdict(enum.Enum):
    """authorizer.Decision: only ALLOW makes a CEL decision `allowed()`."""

    DENY = "deny"
    ALLOW = "allow"
    NO_OPINION = "no_opinion"


@dataclass(frozen=True, slots=True)
class Decision:
    """What `Authorize` returns: a verdict, a reason for humans, and an error (None if none)."""

    verdict: Verdict
    reason: str = ""
    error: str | None = None


class Authorizer(Protocol):
    """Anything that can answer an authorization question; the CEL library only calls this."""

    def authorize(self, attributes: Attributes) -> Decision: ...


class AlwaysAllow:
    """authorizerfactory's always-allow authorizer: allow, no reason."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(Verdict.ALLOW)


class AlwaysDeny:
    """authorizerfactory's always-deny authorizer, which in Go answers "no opinion" with a reason."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(Verdict.NO_OPINION, "Everything is forbidden.")


# -- validation shared with labels -----------------------------------------------------------------


class SelectorError(ValueError):
    """A selector that does not parse; `str()` is apimachinery's error text."""


_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """content.RegexError: the message, examples and the pattern used."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


_SUBDOMAIN_ERROR = _regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com")


def _byte_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def is_dns1123_label(value: str) -> bool:
    """content.IsDNS1123Label reports no error (used for namespace names)."""
    return _byte_len(value) <= 63 and _DNS1123_LABEL_RE.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    """content.IsDNS1123Subdomain reports no error (used for most object names)."""
    return _byte_len(value) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None


def label_key_errors(key: str) -> list[str]:
    """content.IsLabelKey: an optional DNS-subdomain prefix and '/', then a name of at most 63 bytes."""
    parts = key.split("/")
    name_error = _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
    if len(parts) > 2:
        prefixed = "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        return [f"a valid label key {name_error} {prefixed}"]
    errors: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if _byte_len(prefix) > 253:
                errors.append("prefix part must be no more than 253 bytes")
            if _DNS1123_SUBDOMAIN_RE.fullmatch(prefix) is None:
                errors.append("prefix part " + _SUBDOMAIN_ERROR)
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if _LABEL_KEY_RE.fullmatch(name) is None:
        errors.append("name part " + name_error)
    return errors


def label_value_errors(value: str) -> list[str]:
    """content.IsLabelValue: empty, or at most 63 bytes of label-key characters."""
    errors = []
    if _byte_len(value) > 63:
        errors.append("must be no more than 63 bytes")
    if re.fullmatch(_LABEL_VALUE_FMT, value) is None:
        errors.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


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
    value = int(text)
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
