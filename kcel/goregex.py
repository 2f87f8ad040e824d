"""Go's `regexp.Compile` through RE2 (the same syntax), with Go's error texts.

cel-go's `matches` and Kubernetes' `find`/`findAll` compile patterns with Go's regexp, and users
see its error messages (`error parsing regexp: missing closing ): `(a``), so kcel speaks them too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2


class GoRegexError(ValueError):
    """A pattern Go's regexp rejects; `str()` is Go's `error parsing regexp: <code>: `<expr>``."""


# RE2 (C++) error code texts -> Go's regexp/syntax ErrorCode texts for the same failures.
_GO_CODES = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


def _go_error(code: str, expr: str) -> GoRegexError:
    return GoRegexError(f"error parsing regexp: {code}: `{expr}`")


def _translate(error: re2.error, pattern: str) -> GoRegexError:
    """RE2 reports `<code text>: <arg>` (bytes); Go names the same failures with its own words."""
    raw = error.args[0] if error.args else b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, _, arg = text.partition(": ")
    if code in _GO_CODES:
        return _go_error(_GO_CODES[code], arg)
    if "too large" in text:
        return _go_error("expression too large", pattern)
    return _go_error(_GO_CODES["unexpected error"], pattern)


def _has_any_byte_escape(pattern: str) -> bool:
    """Whether the pattern uses `\\C` (any byte), which RE2 accepts and Go rejects; `\\Q...\\E` is literal."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
        elif pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i + 1] == "C":
            return True
        else:
            i += 2
    return False


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every rejected pattern to stderr; the error is reported instead


@lru_cache(maxsize=512)
def compile_go_regex(pattern: str) -> Any:
    """Go's regexp.Compile through RE2, which shares its syntax; failures carry Go's error text.

    >>> compile_go_regex("[0-9]+").search("abc 123").group()
    '123'
    """
    if _has_any_byte_escape(pattern):
        raise _go_error("invalid escape sequence", "\\C")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        raise _translate(err, pattern) from None


try:  # google-re2's wrapper decodes match offsets back to str positions, which a yes/no test never needs
    _UNANCHORED = re2._Anchor.UNANCHORED
    _NO_MATCH = (-1, -1)
except AttributeError:  # pragma: no cover - another google-re2 layout
    _UNANCHORED = None


def search_matches(regex: Any, text: str) -> bool:
    """Whether `regex` (from `compile_go_regex`) matches anywhere in `text`; a fifth of `search()`'s time."""
    if _UNANCHORED is not None:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: let the wrapper deal with them
            return regex.search(text) is not None
        return bool(regex._regexp.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH)
    return regex.search(text) is not None
