"""lark's contextual lexer for the CEL grammar, with a leaner loop per token.

CEL needs the contextual lexer: it scans with the terminals the parser state accepts, so `-1` is
one literal where an operand starts and `-` `1` after one, and `a.in` selects a field. lark's
`ContextualLexer.lex` spends five Python calls on every token (`next_token`, `match`, the
`scanner` property, `Scanner.match`, `LineCounter.feed`), two more to build it and two plus a
regex match to tell `true` from an identifier, and it ends the text by raising `EOFError`: a third
of a parse. The class below keeps what lark built for each parser state (the compiled scanner, its
terminal order, its keywords, the ignored terminals) and rewrites only that loop. When no terminal
matches, it hands the rest of the text back to lark's loop, so every syntax error is lark's own.

Every state first scans with the scanner of all terminals (lark's root lexer), compiled once: the
first terminal of lark's order that matches, if the state accepts it, is what the state's own
scanner (the same order, fewer terminals) would match too. Only a token the state does not accept
(`-1` after an operand) is scanned again by the state's scanner, compiled on that first need: a
scanner took a millisecond to compile and an expression's first parse in a process met a dozen.
After `SETTLE_AFTER` parses the process is one that parses on, and every state scans with its own
scanner: an alternation of fewer terminals is quicker to try.

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
SETTLE_AFTER = 64  # parses


class ContextualLexer(LarkContextualLexer):
    """Yields exactly the tokens lark's `ContextualLexer` yields, lines and columns included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plans: dict[int, _Plan] = {}  # parser state -> its lexer's parts, filled on first use
        self.shared: _Parts | None = None  # the root lexer's parts: every terminal
        self.parses = 0

    def _plan(self, state: int) -> _Plan:
        if self.shared is None:
            self.shared = _Parts(self.root_lexer)
        plan = _Plan(self.lexers[state], self.shared)
        if self.parses > SETTLE_AFTER:
            plan.settle()
        return self.plans.setdefault(state, plan)

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        source = lexer_state.text  # a TextSlice from lark 1.3 on, the text itself in lark 1.2
        text, end = (source.text, source.end) if hasattr(source, "end") else (source, len(source))
        counter = lexer_state.line_ctr
        pos, line, line_start = counter.char_pos, counter.line, counter.line_start_pos
        states = parser_state.state_stack  # the parser pushes and pops this list in place
        plans = self.plans
        self.parses += 1
        if self.parses == SETTLE_AFTER:
            for plan in list(plans.values()):
                plan.settle()
        while pos < end:
            state = states[-1]
            plan = plans.get(state) or self._plan(state)
            parts = plan.parts
            for scanner in parts.scanners:
                match = scanner.match(text, pos, end)
                if match is not None:
                    kind = match.lastgroup
                    keywords = parts.keywords.get(kind)
                    if kind in plan.accepts and (keywords is None or keywords.get(match.group(), kind) in plan.accepts):
                        break
                    match = None
                    break
            if match is None:  # not a token of this state: its own scanner decides
                parts = plan.own()
                for scanner in parts.scanners:
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
            if kind in parts.multiline and "\n" in value:
                line += value.count("\n")
                line_start = start + value.rindex("\n") + 1
            if kind in parts.ignored:
                continue
            keywords = parts.keywords.get(kind)
            if keywords is not None:  # IDENT is TRUE, IN, ... where the state accepts those
                kind = keywords.get(value, kind)
            token = _new_str(Token, value)  # and its eight documented fields, as `Token(...)` sets them
            token.type, token.start_pos, token.value = kind, start, value
            token.line, token.column = start_line, start_column
            token.end_line, token.end_column, token.end_pos = line, pos - line_start + 1, pos
            lexer_state.last_token = token
            yield token


class _Parts:
    """What the loop reads of one lark lexer for every token: its compiled scanner and terminal callbacks."""

    __slots__ = ("scanners", "ignored", "multiline", "keywords")

    def __init__(self, lexer: AbstractBasicLexer) -> None:
        assert isinstance(lexer, BasicLexer)
        scanner = lexer.scanner  # compiled on first use, the keyword callbacks with it
        self.scanners = scanner._mres  # one alternation per 100 terminals
        self.ignored = lexer.ignore_types
        self.multiline = lexer.newline_types
        # lark's only callbacks here turn an IDENT that spells a keyword into that keyword.
        self.keywords = {kind: _keywords(callback) for kind, callback in lexer.callback.items()}


class _Plan:
    """One parser state's lexing: the shared scanner where the state accepts what it matched, else the state's."""

    __slots__ = ("parts", "accepts", "lexer", "_own")

    def __init__(self, lexer: AbstractBasicLexer, shared: _Parts) -> None:
        assert isinstance(lexer, BasicLexer)
        self.parts = shared  # scanned with first
        self.accepts = frozenset(t.name for t in lexer.terminals)  # of what `parts` matches
        self.lexer = lexer
        self._own: _Parts | None = None

    def own(self) -> _Parts:
        if self._own is None:
            self._own = _Parts(self.lexer)
        return self._own

    def settle(self) -> None:
        """Scan with the state's own scanner from now on: whatever it matches, the state accepts."""
        self.parts = self.own()
        self.accepts = frozenset(t.name for t in self.lexer.terminals_by_name.values())


def _keywords(callback: Any) -> dict[str, str]:
    """The keywords lark's `UnlessCallback` gives their own terminal, by spelling: with plain
    strings and no regex flags, its `fullmatch` is string equality."""
    plain = isinstance(callback, UnlessCallback) and not callback.scanner.g_regex_flags
    terminals = callback.scanner.terminals if plain else ()
    if not plain or not all(isinstance(t.pattern, PatternStr) and not t.pattern.flags for t in terminals):
        raise NotImplementedError(f"lexer callback {callback!r}: only plain keywords are handled")
    return {t.pattern.value: t.name for t in terminals}
