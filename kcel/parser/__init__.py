"""Stage 1: CEL text -> `Parsed` (the AST plus what the parse learned about the source)."""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import BasicLexer, LexerThread

from kcel.errors import CompileError, Issue, Source
from kcel.parser.ast import Call, Expr
from kcel.parser.builder import Builder, LimitExceeded
from kcel.parser.lalr import LALR_Parser
from kcel.parser.lexer import ContextualLexer
from kcel.parser.macros import ALL_MACROS, Macro, macro_table
from kcel.parser.recovery import (
    ERROR_LIMIT,
    Resumption,
    after_a_complete_operand,
    after_operand,
    deleted,
    escape_failure,
    float_after_dot,
    lexer_error,
    missing_at_end,
)

__all__ = ["Parsed", "parse", "MAX_EXPRESSION_SIZE"]

MAX_EXPRESSION_SIZE = 100_000  # code points, cel-go's default

# ANTLR's names for cel-go's tokens, in its token-type order, so syntax errors read the same.
_DISPLAY = {
    "EQ": "'=='", "NE": "'!='", "IN": "'in'", "LT": "'<'", "LE": "'<='", "GE": "'>='", "GT": "'>'",
    "AND": "'&&'", "OR": "'||'", "LBRACKET": "'['", "RBRACKET": "']'", "LBRACE": "'{'",
    "RBRACE": "'}'", "LPAREN": "'('", "RPAREN": "')'", "DOT": "'.'", "COMMA": "','",
    "MINUS": "'-'", "BANG": "'!'", "QMARK": "'?'", "COLON": "':'", "PLUS": "'+'", "STAR": "'*'",
    "SLASH": "'/'", "PERCENT": "'%'", "TRUE": "'true'", "FALSE": "'false'", "NULL": "'null'",
    "NUM_FLOAT": "NUM_FLOAT", "NEG_FLOAT": "NUM_FLOAT", "NUM_INT": "NUM_INT", "NEG_INT": "NUM_INT",
    "NUM_UINT": "NUM_UINT", "STRING": "STRING", "BYTES": "BYTES", "IDENT": "IDENTIFIER",
    "ESC_IDENT": "ESC_IDENTIFIER", "$END": "<EOF>",
}  # fmt: skip
_ORDER = {name: i for i, name in enumerate(dict.fromkeys(_DISPLAY.values()))}


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed expression. `macro_calls` maps an expansion's id to the call as written."""

    expr: Expr
    source: Source
    macro_calls: Mapping[int, Call] = field(default_factory=dict)


_builder = Builder()
_lark = Lark.open_from_package(
    "kcel.parser",
    "cel.lark",
    parser="lalr",
    lexer="contextual",
    transformer=_builder,
    cache=True,
    maybe_placeholders=True,
    propagate_positions=False,
    # lark's lexer and parser, each with a leaner loop: see kcel.parser.lexer and kcel.parser.lalr
    _plugins={"ContextualLexer": ContextualLexer, "LALR_Parser": LALR_Parser},
)
_lock = threading.Lock()
# cel-go's lexer is context-free: what error recovery asks of the next tokens, one lexer built once for it
_basic_lexer = BasicLexer(_lark.lexer_conf)


def _lex(text: str) -> Iterator[Token]:
    """The tokens of `text` as a context-free lexer reads them (`UnexpectedCharacters` where none fits)."""
    return LexerThread.from_text(_basic_lexer, text).lex(None)  # type: ignore[no-untyped-call,no-any-return]


# id(macros) -> (macros, their table). Keyed by identity: hashing a tuple of two dozen Macro
# dataclasses took several microseconds per parse, and an Env passes the same tuple every time.
_tables: dict[int, tuple[tuple[Macro, ...], Mapping[tuple[str, int, bool], Macro]]] = {}
_MAX_TABLES = 64  # for callers that build a new tuple per call


# A lone surrogate is a byte that was not UTF-8 (Python decodes a command line's bytes so, `surrogateescape`): Go
# reads each such byte of a string as U+FFFD, and so does cel-go's parser.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def parse(
    text: str, macros: Iterable[Macro] = ALL_MACROS, description: str = "<input>", lenient_code_points: bool = False
) -> Parsed:
    """Parse CEL text into an AST, expanding macros; raise `CompileError` on bad input. `lenient_code_points`:
    string escapes as cel-go before v0.23 decodes them (a surrogate is U+FFFD).

    >>> parse("a + 1").expr.function
    '_+_'
    """
    if not text.isascii():
        text = _LONE_SURROGATE.sub("\ufffd", text)
    source = Source(text, description)
    if len(text) > MAX_EXPRESSION_SIZE:
        message = f"expression code point size exceeds limit: size: {len(text)}, limit {MAX_EXPRESSION_SIZE}"
        raise CompileError([Issue(message)], source)
    table = _macro_table(macros)
    with _lock:
        _builder.reset(table, lenient_code_points)
        try:
            expr: Expr = _lark.parse(text)  # type: ignore[assignment]
        except UnexpectedInput as err:
            raise CompileError(_as_antlr_reports(err, text, table, lenient_code_points), source) from None
        except (LimitExceeded, VisitError) as err:
            cause = err.orig_exc if isinstance(err, VisitError) else err
            if not isinstance(cause, LimitExceeded):
                raise
            raise CompileError([*_builder.issues, Issue(str(cause))], source) from None
        if _builder.issues:
            raise CompileError(_as_antlr_reports(None, text, table, lenient_code_points), source)
        return Parsed(expr, source, _builder.macro_calls)


def _as_antlr_reports(
    err: UnexpectedInput | None, text: str, table: Mapping[tuple[str, int, bool], Macro], lenient: bool = False
) -> list[Issue]:
    """The issues of a failed parse (`err`, or the builder's issues), with each error ANTLR's recovery would go on
    to find: the text as ANTLR resumes it is parsed again (see kcel.parser.recovery). Called holding `_lock`."""
    found: list[Issue] = []
    insertions: list[int] = []  # offsets at which a token ANTLR inserted went into the text, in order

    def original(issues: Iterable[Issue]) -> list[Issue]:
        """Issues at the offsets of the source, before the insertions."""
        mapped = []
        for issue in issues:
            offset = issue.offset
            for at in reversed(insertions):
                offset = offset - 1 if offset > at else offset
            mapped.append(issue if offset == issue.offset else dataclasses.replace(issue, offset=offset))
        return mapped

    for _ in range(ERROR_LIMIT):
        resumption = _resumption(err, text)
        if resumption is None:
            found += original(_builder.issues if err is None else [*_builder.issues, _syntax_issue(err, text)])
            break
        found += original([resumption.issue])
        if resumption.resumed is None:
            found += original(_builder.issues)
            if resumption.lexed_from is not None:
                found += original(_lexer_errors(" " * resumption.lexed_from + text[resumption.lexed_from :]))
            break
        if resumption.inserted_at is not None:
            insertions.append(resumption.inserted_at)
        text, err = resumption.resumed, None
        _builder.reset(table, lenient)
        try:
            _lark.parse(text)
        except UnexpectedInput as again:
            err = again
        except (LimitExceeded, VisitError):
            break
    unique = {(issue.offset, issue.message): issue for issue in found}
    return sorted(unique.values(), key=lambda issue: issue.offset)


def _resumption(err: UnexpectedInput | None, text: str) -> Resumption | None:
    """The first error as ANTLR reports it and where ANTLR goes on, when kcel's parse stopped otherwise."""
    failure = _first_bad_escape(text, len(text) if err is None else _error_offset(err, text))
    if failure is not None:
        quote, end = failure
        return lexer_error(text, quote, text[quote:end], end)
    if err is None:
        return None
    if isinstance(err, UnexpectedCharacters):
        offset = err.pos_in_stream or 0
        shown = _bad_text(text, offset)
        end = offset + len(shown)
        return lexer_error(text, offset, shown, end + 1 if text[end : end + 1] == "\n" else end)
    assert isinstance(err, UnexpectedToken)
    token: Token = err.token
    expected = frozenset(err.expected)
    if token.type == "$END":
        missing = missing_at_end(text, expected)
        if missing is None and text.rstrip().endswith("!"):
            # ANTLR's loop over `!` syncs at the end and deletes the end of input itself (cel-go `!`, `a + !`)
            wanted = _wanted(expected | {"MINUS"})  # ANTLR's set is an operand's first tokens, `-` too
            missing = Issue(f"Syntax error: extraneous input '<EOF>' expecting {wanted}", len(text))
        return None if missing is None else Resumption(missing, None)
    if expected == _MEMBER_TOKENS:  # `a.5`: ANTLR read `.5` as a number after the complete operand `a`
        number = float_after_dot(text, text.rfind(".", 0, token.start_pos or 0), _lex)
        return None if number is None else after_operand(text, number, frozenset({"$END"}), _lex)
    if after_a_complete_operand(expected):
        return after_operand(text, token, expected, _lex)
    return deleted(text, token, expected, _wanted(expected), _lex)


def _lexer_errors(text: str) -> list[Issue]:
    """Every error ANTLR's lexer reports in `text`, lexing on past each as `lexer_error` does."""
    issues: list[Issue] = []
    for _ in range(ERROR_LIMIT):
        failed: int | None = None
        try:
            for _token in _lex(text):
                pass
        except UnexpectedCharacters as err:
            failed = err.pos_in_stream or 0
        escape = _first_bad_escape(text, len(text) if failed is None else failed)
        if escape is not None:
            quote, end = escape
            resumption = lexer_error(text, quote, text[quote:end], end)
        elif failed is not None:
            shown = _bad_text(text, failed)
            end = failed + len(shown)
            resumption = lexer_error(text, failed, shown, end + 1 if text[end : end + 1] == "\n" else end)
        else:
            break
        issues.append(resumption.issue)
        assert resumption.resumed is not None
        text = resumption.resumed
    return issues


def _first_bad_escape(text: str, before: int) -> tuple[int, int] | None:
    """The first string literal before offset `before` with an escape ANTLR's lexer rejects (kcel's lexer takes any
    escape and its builder rejects it later, if it gets that far)."""
    try:
        for token in _lex(text):
            start = token.start_pos or 0
            if start > before:
                return None
            if token.type in ("STRING", "BYTES") and "\\" in token:
                failure = escape_failure(text, start)
                if failure is not None:
                    return failure
    except UnexpectedInput:
        pass  # the literals up to the character no token takes were seen
    return None


def _error_offset(err: UnexpectedInput, text: str) -> int:
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        return err.token.start_pos or 0
    return err.pos_in_stream if isinstance(err, UnexpectedCharacters) and err.pos_in_stream is not None else len(text)


_MEMBER_TOKENS = frozenset({"ESC_IDENT", "IDENT", "QMARK"})


def _macro_table(macros: Iterable[Macro]) -> Mapping[tuple[str, int, bool], Macro]:
    cached = _tables.get(id(macros))
    if cached is not None and cached[0] is macros:
        return cached[1]
    table = macro_table(macros)
    if isinstance(macros, tuple):  # immutable, and kept alive by the entry so its id is not reused
        if len(_tables) >= _MAX_TABLES:
            _tables.clear()
        _tables[id(macros)] = (macros, table)
    return table


def _syntax_issue(err: UnexpectedInput, text: str) -> Issue:
    if isinstance(err, UnexpectedCharacters):
        offset = err.pos_in_stream or 0
        return Issue(f"Syntax error: token recognition error at: '{_bad_text(text, offset)}'", offset)
    assert isinstance(err, UnexpectedToken)
    token: Token = err.token
    if token.type == "$END":
        shown, offset = "<EOF>", len(text)
    else:
        shown, offset = str(token), token.start_pos or 0
    if frozenset(err.expected) == _MEMBER_TOKENS:
        # ANTLR predicts `.?name` and `.name` at once: neither fitting, no alternative is viable from the dot on
        dot = text.rfind(".", 0, offset)
        end = offset if token.type == "$END" else token.end_pos or offset
        return Issue(f"Syntax error: no viable alternative at input '{text[dot:end]}'", offset)
    return Issue(f"Syntax error: mismatched input '{shown}' expecting {_wanted(err.expected)}", offset)


def _wanted(names: Iterable[str]) -> str:
    """The tokens the parser expected, as ANTLR lists them."""
    displayed = {_DISPLAY.get(name, name) for name in names}
    if "NUM_INT" in displayed and "IDENTIFIER" in displayed:  # a primary: the literal keywords are tokens too
        displayed |= {"'true'", "'false'", "'null'"}
    expected = sorted(displayed, key=lambda n: _ORDER.get(n, 99))
    return expected[0] if len(expected) == 1 else "{" + ", ".join(expected) + "}"


def _bad_text(text: str, offset: int) -> str:
    """What ANTLR shows for a character no token starts with: an unclosed quote runs to the line end."""
    ch = text[offset]
    if ch in "\"'`" or (ch in "rRbB" and text[offset + 1 : offset + 2] in ("'", '"')):
        end = text.find("\n", offset)
        return text[offset : end if end >= 0 else len(text)]
    return ch
