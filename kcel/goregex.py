"""Go's `regexp.Compile` through RE2 (the same syntax), with Go's error texts.

cel-go's `matches` and Kubernetes' `find`/`findAll` compile patterns with Go's regexp, and users
see its error messages (`error parsing regexp: missing closing ): `(a``), so kcel speaks them too.
"""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType
from typing import Any


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


def _translate(error: Exception, pattern: str) -> GoRegexError:
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


# google-re2, its options and its unanchored-match flag, imported with the first pattern rather than at start-up
_RE2: list[tuple[ModuleType, Any, Any]] = []


def _engine() -> tuple[ModuleType, Any, Any]:
    if not _RE2:
        import re2

        options = re2.Options()
        options.log_errors = False  # RE2 would print every rejected pattern to stderr; the error is reported instead
        # google-re2's wrapper decodes match offsets back to str positions, which a yes/no test never needs
        unanchored = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
        _RE2.append((re2, options, unanchored))
    return _RE2[0]


@lru_cache(maxsize=512)
def compile_go_regex(pattern: str) -> Any:
    """Go's regexp.Compile through RE2, which shares its syntax; failures carry Go's error text.

    >>> compile_go_regex("[0-9]+").search("abc 123").group()
    '123'
    """
    if _has_any_byte_escape(pattern):
        raise _go_error("invalid escape sequence", "\\C")
    re2, options, _ = _engine()
    try:
        return re2.compile(pattern, options)
    except re2.error as err:
        raise _translate(err, pattern) from None


_NO_MATCH = (-1, -1)


def search_matches(regex: Any, text: str) -> bool:
    """Whether `regex` (from `compile_go_regex`, so google-re2 is imported) matches anywhere in `text`; a fifth of
    `search()`'s time."""
    unanchored = _RE2[0][2]
    if unanchored is not None:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: let the wrapper deal with them
            return regex.search(text) is not None
        return bool(regex._regexp.Match(unanchored, data, 0, len(data))[0] != _NO_MATCH)
    return regex.search(text) is not None
