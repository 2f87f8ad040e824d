"""Syntax errors as cel-go's ANTLR parser reports them where kcel's LALR parse stops differently.

ANTLR's lexer is context-free and, after a character no token takes, resumes past it; its parser, at a token that
cannot continue a complete operand, expects what the innermost open construct needs next (`<EOF>` at the top, `')'`
in parentheses or a call, `{']', ','}` in a list, `']'` in an index, `{'}', ','}` after a map or message entry's
value). When the token after the bad one is such a token, ANTLR deletes the bad one (`extraneous input`) and parses
on; otherwise it reports `mismatched input` and skips to where it can resume. kcel reproduces that by blanking what
ANTLR skipped (offsets stay those of the source) and parsing again, a bounded number of times: each error found so is
one cel-go reports, in source order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lark import Token
from lark.exceptions import UnexpectedCharacters

from kcel.errors import Issue

__all__ = [
    "ERROR_LIMIT",
    "Resumption",
    "after_a_complete_operand",
    "after_operand",
    "deleted",
    "escape_failure",
    "float_after_dot",
    "lexer_error",
    "missing_at_end",
]

ERROR_LIMIT = 100  # re-parses at most (cel-go's default ErrorReportingLimit is 100 errors)

# ANTLR's display of what each open construct needs after a complete operand, and the tokens it takes there
_CLOSING = {
    "": ("<EOF>", frozenset({"$END"})),
    "(": ("')'", frozenset({"RPAREN"})),
    "index": ("']'", frozenset({"RBRACKET"})),
    "[": ("{']', ','}", frozenset({"RBRACKET", "COMMA"})),
    "{": ("{'}', ','}", frozenset({"RBRACE", "COMMA"})),
    "key": ("':'", frozenset({"COLON"})),
    "?": ("':'", frozenset({"COLON"})),
}
# operators an operand can be continued by: a state expecting them has a complete operand before the bad token
_CONTINUING = frozenset({"EQ", "AND", "OR"})
# the second character of a two-character operator: ANTLR's lexer reads it before failing on the first alone
_OPERATOR_PREFIXES = frozenset("=&|")


@dataclass(frozen=True, slots=True)
class Resumption:
    """One error ANTLR reports, and the text ANTLR goes on with (None: it resynchronises past what kcel can follow,
    so nothing more is reported)."""

    issue: Issue
    resumed: str | None
    inserted_at: int | None = None  # where ANTLR's inserted token went into `resumed` (later offsets are one more)
    lexed_from: int | None = None  # parsing ends here, but ANTLR's lexer still reports what it finds from here on


def lexer_error(text: str, offset: int, shown: str, end: int) -> Resumption:
    """ANTLR's lexer fails at `offset` having read `text[offset:end]` (`shown`); it skips through the character it
    failed on and lexes on."""
    if text[offset] in _OPERATOR_PREFIXES and offset + 1 < len(text):
        shown, end = text[offset : offset + 2], offset + 2
    issue = Issue(f"Syntax error: token recognition error at: '{shown}'", offset)
    return Resumption(issue, _blank(text, offset, end))


Lex = Callable[[str], Iterator[Token]]  # kcel's lexer, context-free (`Lark.lex`)


def after_operand(text: str, token: Token, expected: frozenset[str], lex: Lex) -> Resumption | None:
    """A token that no complete operand before it can be continued by, worded as ANTLR words it; None when the
    parse did not stop after an operand or the construct open there is one kcel does not model."""
    if not after_a_complete_operand(expected):
        return None
    context = _open_construct(text, token.start_pos or 0)
    if context is None:
        return None
    display, closing = _CLOSING[context]
    start, shown = token.start_pos or 0, str(token)
    end = token.end_pos or start + len(shown)
    following = _next_token_type(text, end, lex)
    if following in closing:
        issue = Issue(f"Syntax error: extraneous input '{shown}' expecting {display}", start)
        return Resumption(issue, _blank(text, start, end))
    if context in ("key", "?") and token.type in _OPERAND_STARTS:
        # ANTLR inserts the `:` the token can follow, and parses on as if it were there
        issue = Issue(f"Syntax error: missing ':' at '{shown}'", start)
        return Resumption(issue, text[:start] + ":" + text[start:], inserted_at=start)
    issue = Issue(f"Syntax error: mismatched input '{shown}' expecting {display}", start)
    # at the top, ANTLR's recovery consumes every token to the end (lexing them) and parses nothing more
    return Resumption(issue, None, lexed_from=end if context == "" else None)


# the tokens an operand can start with
_OPERAND_STARTS = frozenset({
    "IDENT", "ESC_IDENT", "NUM_INT", "NUM_UINT", "NUM_FLOAT", "NEG_INT", "NEG_FLOAT", "STRING", "BYTES", "TRUE",
    "FALSE", "NULL", "LPAREN", "LBRACKET", "LBRACE", "DOT", "MINUS", "BANG",
})  # fmt: skip


def after_a_complete_operand(expected: frozenset[str]) -> bool:
    """Whether the parser stopped where an operand was complete (it expected an operator, or the end)."""
    return "$END" in expected or _CONTINUING <= expected


def deleted(text: str, token: Token, expected: frozenset[str], display: str, lex: Lex) -> Resumption | None:
    """Where no operand is complete (an operand's start, a member's name): ANTLR deletes the bad token when the
    next one is one it expects (`extraneous input`); None otherwise (kcel's `mismatched input` stands)."""
    start, shown = token.start_pos or 0, str(token)
    end = token.end_pos or start + len(shown)
    following = _next_token_type(text, end, lex)
    if following in _KEYWORDS and "IDENT" in expected:
        following = "IDENT"  # the literal keywords start an operand as a name does
    if following not in expected:
        return None
    issue = Issue(f"Syntax error: extraneous input '{shown}' expecting {display}", start)
    return Resumption(issue, _blank(text, start, end))


_KEYWORDS = frozenset({"TRUE", "FALSE", "NULL"})


def float_after_dot(text: str, dot: int, lex: Lex) -> Token | None:
    """`a.5`: ANTLR lexes `.5` as one NUM_FLOAT, where kcel's contextual lexer read a dot and then a number."""
    if not text[dot + 1 : dot + 2].isdigit():
        return None
    first = next(lex(text[dot:]), None)
    if first is None or first.type != "NUM_FLOAT":
        return None
    return Token("NUM_FLOAT", str(first), start_pos=dot, end_pos=dot + len(str(first)))


_SIMPLE_ESCAPES = frozenset("abfnrtv\"'\\?`")
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_ESCAPE_DIGITS = {"x": (_HEX,) * 2, "X": (_HEX,) * 2, "u": (_HEX,) * 4, "U": (_HEX,) * 8}
_TRIPLE_QUOTES = ('"""', "'''")


def escape_failure(text: str, literal: int) -> tuple[int, int] | None:
    r"""Where ANTLR's lexer rejects an escape in the string literal at `literal`: its quote's offset and the end of
    what it read, through the character it failed on; None when its lexer takes the literal (kcel's own error about
    the escape stands then). Its escapes: `\` and one of abfnrtv"'\?`, `\x` or `\X` and two hex digits, `\u` and
    four, `\U` and eight, or 0-3 and two octal digits."""
    quote = literal
    while quote < len(text) and text[quote] not in "\"'":
        quote += 1  # past a b or B prefix (a raw literal has no escapes)
    if quote >= len(text) or "r" in text[literal:quote].lower():
        return None
    if text[quote : quote + 3] in _TRIPLE_QUOTES:
        failure = _escape_failure_from(text, quote, text[quote : quote + 3])
        # ANTLR falls back to the empty string its first two quotes make, and lexes on from the third
        return None if failure is None else escape_failure(text, quote + 2)
    return _escape_failure_from(text, quote, text[quote])


def _escape_failure_from(text: str, quote: int, delimiter: str) -> tuple[int, int] | None:
    j = quote + len(delimiter)
    while j < len(text) and not text.startswith(delimiter, j):
        if text[j] != "\\":
            j += 1
            continue
        kind = text[j + 1 : j + 2]
        if kind and kind in _SIMPLE_ESCAPES:
            j += 2
            continue
        wanted = _ESCAPE_DIGITS.get(kind) or ((_OCTAL, _OCTAL) if kind and kind in "0123" else None)
        if wanted is None:
            return quote, min(j + 2, len(text))
        for k, digits in enumerate(wanted):
            at = j + 2 + k
            if at >= len(text) or text[at] not in digits:
                return quote, min(at + 1, len(text))
        j += 2 + len(wanted)
    return None


def _blank(text: str, start: int, end: int) -> str:
    """The text with `text[start:end]` as spaces (newlines kept, so lines and columns stay)."""
    return text[:start] + "".join(c if c == "\n" else " " for c in text[start:end]) + text[end:]


def _next_token_type(text: str, end: int, lex: Lex) -> str:
    """The type of the token after `end`, past the characters ANTLR's lexer skips (as `lexer_error` skips them)."""
    rest = text[end:]
    for _ in range(ERROR_LIMIT):
        try:
            following = next(lex(rest), None)
        except UnexpectedCharacters as err:
            offset = err.pos_in_stream or 0
            if rest[offset] in "\"'":  # an unterminated string: through its line's end
                line_end = rest.find("\n", offset)
                skipped = line_end + 1 if line_end >= 0 else len(rest)
            else:
                skipped = offset + (2 if rest[offset] in _OPERATOR_PREFIXES else 1)
            rest = _blank(rest, offset, skipped)
            continue
        if following is not None and following.type in ("STRING", "BYTES") and "\\" in following:
            failure = escape_failure(rest, following.start_pos or 0)
            if failure is not None:  # a bad escape ANTLR's lexer skips through
                rest = _blank(rest, failure[0], failure[1])
                continue
        return "$END" if following is None else following.type
    return "?"


def missing_at_end(text: str, expected: frozenset[str]) -> Issue | None:
    """The input ended inside one bracket, where its closing token would end the expression: ANTLR inserts it and
    reports it missing (not after a list's or map's element, where it may still want a `,`; not inside two
    brackets, where the inserted one could not end the input)."""
    levels = _levels(text, len(text))
    if len(levels) != 2 or "?" in levels[-1]:
        return None
    last = text.rstrip()[-1:]
    context, after_comma = levels[-1][0], last == ","
    closer, name = _CLOSERS.get(context, ("", ""))
    if not closer:
        return None
    if context in ("(", "index"):  # after the argument or index, where nothing but the closer may follow
        if last in ",([" or name not in expected:
            return None
    elif not after_comma:  # a list or map: only after a trailing comma is the closer all there can be
        return None
    return Issue(f"Syntax error: missing '{closer}' at '<EOF>'", len(text))


_CLOSERS = {"(": (")", "RPAREN"), "index": ("]", "RBRACKET"), "[": ("]", "RBRACKET"), "{": ("}", "RBRACE")}


def _open_construct(text: str, offset: int) -> str | None:
    """The innermost construct open at `offset`: a bracket (`""` at the top, `"index"` for `a[`, `"{"` only after
    an entry's `:`, `"key"` before it) or `"?"`, a conditional waiting for its `:`; None for a conditional in a map
    literal, not modelled."""
    level = _levels(text, offset)[-1]
    if level[0] == "{":
        if "?" in level:
            return None
        return "{" if ":" in level else "key"
    return "?" if level.count("?") > level.count(":") else level[0]


def _levels(text: str, offset: int) -> list[list[str]]:
    """The brackets open at `offset`, outermost first (`""`, the top): each its kind and the `:` and conditional `?`
    seen at its level since its last `,`."""
    stack: list[list[str]] = [[""]]  # per level: the construct, then what was seen at this level
    i = 0
    while i < offset:
        ch = text[i]
        if ch in "\"'":
            i = _skip_string(text, i)
            continue
        if text.startswith("//", i):
            newline = text.find("\n", i)
            i = offset if newline < 0 else newline
            continue
        if ch in "([{":
            kind = "index" if ch == "[" and _after_operand(text, i) else ch
            stack.append([kind])
        elif ch in ")]}" and len(stack) > 1:
            stack.pop()
        elif ch in ",:?":
            if ch == "?" and _optional_marker(text, i):
                pass
            elif ch == ",":
                del stack[-1][1:]
            else:
                stack[-1].append(ch)
        i += 1
    return stack


def _after_operand(text: str, i: int) -> bool:
    """Whether the `[` at `i` indexes what precedes it (rather than opening a list)."""
    before = text[:i].rstrip()
    if before.endswith("in") and not (before[-3:-2].isalnum() or before[-3:-2] == "_"):
        return False  # the operator `in`
    return bool(before) and (before[-1].isalnum() or before[-1] in "_)]}\"'`")


def _optional_marker(text: str, i: int) -> bool:
    """`.?f`, `[?i]`, `{?k: v}`, `[?e, ...]`: a `?` of optional syntax, not a conditional's."""
    before = text[:i].rstrip()
    return not before or before[-1] in ".[{,"


def _skip_string(text: str, i: int) -> int:
    """The offset after the string literal opening at `i` (or the end of its line when unterminated)."""
    quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else text[i]
    raw = i > 0 and text[i - 1] in "rR"
    j = i + len(quote)
    while j < len(text):
        if text.startswith(quote, j):
            return j + len(quote)
        if text[j] == "\\" and not raw:
            j += 2
            continue
        if text[j] == "\n" and len(quote) == 1:
            return j
        j += 1
    return j
