"""lark's contextual lexer for the CEL grammar, with a leaner loop per token.

CEL needs the contextual lexer: it scans with the terminals the parser state accepts, so `-1` is
one literal where an operand starts and `-` `1` after one, and `a.in` selects a field. lark's
`ContextualLexer.lex` spends five Python calls on every token (`next_token`, `match`, the
`scanner` property, `Scanner.match`, `LineCounter.feed`), two more to build it and two plus a
regex match to tell `true` from an identifier, and it ends the text by raising `EOFError`: a third
of a parse. The class below keeps what lark built for each parser state (the compiled scanner, its
terminal order, its keywords, the ignored terminals) and rewrites only that loop. When no terminal
matches, it hands the rest of the text back to lark's loop, so every syntax error is lark's own.

It is plugged in with lark's `_plugins` option, the hook lark-cython uses to replace the same
class. tests/test_parser_internals.py checks that it yields lark's tokens, field for field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lark.lexer import AbstractBasicLexer, BasicLexer, LexerState, PatternStr, Token, UnlessCallback
from lark.lexer import ContextualLexer as LarkContextualLexer

__all__ = ["ContextualLexer"]

_new_str = str.__new__


class ContextualLexer(LarkContextualLexer):
    """Yields exactly the tokens lark's `ContextualLexer` yields, lines and columns included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plans: dict[int, _Plan] = {}  # parser state -> its lexer's parts, filled on first use

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        source = lexer_state.text  # a TextSlice from lark 1.3 on, the text itself in lark 1.2
        text, end = (source.text, source.end) if hasattr(source, "end") else (source, len(source))
        counter = lexer_state.line_ctr
        pos, line, line_start = counter.char_pos, counter.line, counter.line_start_pos
        states = parser_state.state_stack  # the parser pushes and pops this list in place
        plans = self.plans
        while pos < end:
            state = states[-1]
            plan = plans.get(state) or plans.setdefault(state, _Plan(self.lexers[state]))
            for scanner in plan.scanners:
                match = scanner.match(text, pos, end)
                if match is not None:
                    break
            else:  # no terminal matches: lark's loop raises the error lark raises
                counter.char_pos, counter.line, counter.line_start_pos = pos, line, line_start
                counter.column = pos - line_start + 1
                yield from super().lex(lexer_state, parser_state)
                return
            kind, value, start, pos = match.lastgroup, match.group(), pos, match.end()
            start_line, start_column = line, start - line_start + 1
            if kind in plan.multiline and "\n" in value:
                line += value.count("\n")
                line_start = start + value.rindex("\n") + 1
            if kind in plan.ignored:
                continue
            keywords = plan.keywords.get(kind)
            if keywords is not None:  # IDENT is TRUE, IN, ... where the state accepts those
                kind = keywords.get(value, kind)
            token = _new_str(Token, value)  # and its eight documented fields, as `Token(...)` sets them
            token.type, token.start_pos, token.value = kind, start, value
            token.line, token.column = start_line, start_column
            token.end_line, token.end_column, token.end_pos = line, pos - line_start + 1, pos
            lexer_state.last_token = token
            yield token


class _Plan:
    """The parts of lark's lexer for one parser state that the loop reads for every token."""

    __slots__ = ("scanners", "ignored", "multiline", "keywords")

    def __init__(self, lexer: AbstractBasicLexer) -> None:
        assert isinstance(lexer, BasicLexer)
        scanner = lexer.scanner  # compiled on first use, the keyword callbacks with it
        self.scanners = scanner._mres  # one alternation per 100 terminals
        self.ignored = lexer.ignore_types
        self.multiline = lexer.newline_types
        # lark's only callbacks here turn an IDENT that spells a keyword into that keyword.
        self.keywords = {kind: _keywords(callback) for kind, callback in lexer.callback.items()}


def _keywords(callback: Any) -> dict[str, str]:
    """The keywords lark's `UnlessCallback` gives their own terminal, by spelling: with plain
    strings and no regex flags, its `fullmatch` is string equality."""
    plain = isinstance(callback, UnlessCallback) and not callback.scanner.g_regex_flags
    terminals = callback.scanner.terminals if plain else ()
    if not plain or not all(isinstance(t.pattern, PatternStr) and not t.pattern.flags for t in terminals):
        raise NotImplementedError(f"lexer callback {callback!r}: only plain keywords are handled")
    return {t.pattern.value: t.name for t in terminals}
