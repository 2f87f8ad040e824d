"""lark's LALR(1) parser for the CEL grammar, with a leaner loop per token.

lark's `ParserState.feed_token` looks each action up as an `(action, argument)` pair and, at every
reduction, compares the rule with the end state (an `assert`) and hashes it to find its callback:
two Python-level calls of lark's `Rule` per reduction, and a CEL expression reduces about as often
as it has tokens. The class below reads the same parse table, once per start symbol, into actions
the loop needs no lookup for: a shift is the next state, a reduction its size, callback and the
name it reduces to. Everything else is lark's: the table, the callbacks (kcel.parser.builder's
methods, as lark wraps them), the parser state the contextual lexer reads, and every error: where
the table has no action, lark's own `feed_token` raises what lark raises.

It is plugged in with lark's `_plugins` option, like kcel.parser.lexer. tests/test_parser_internals.py
checks that it builds what lark's loop builds and fails where and as lark's fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lark.exceptions import UnexpectedInput
from lark.lexer import Token
from lark.parsers.lalr_analysis import Shift
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser import LALR_Parser as LarkLALRParser
from lark.parsers.lalr_parser import _Parser as LarkParser
from lark.parsers.lalr_parser_state import ParseConf, ParserState

__all__ = ["LALR_Parser"]

Reduction = tuple[int, Any, str]  # how many values it takes, the rule's callback, the nonterminal it gives
Actions = dict[int, dict[str, "int | Reduction"]]  # state -> symbol -> the next state (a shift) or a reduction


class LALR_Parser(LarkLALRParser):  # noqa: N801 (lark's name for the class it replaces)
    """lark's LALR parser, answering `parse` with `_LeanParser`'s loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parser = _LeanParser(self.parser.parse_table, self.parser.callbacks, self.parser.debug)

    @classmethod
    def deserialize(cls, data: Any, memo: Any, callbacks: Any, debug: bool = False) -> LALR_Parser:  # type: ignore[override]
        inst = super().deserialize(data, memo, callbacks, debug)  # type: ignore[no-untyped-call]
        inst.parser = _LeanParser(inst.parser.parse_table, inst.parser.callbacks, inst.parser.debug)
        return inst  # type: ignore[no-any-return]


class _LeanParser(LarkParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.actions: Actions | None = None

    def parse(self, lexer: Any, start: str, value_stack: Any = None, state_stack: Any = None,
              start_interactive: bool = False) -> Any:  # fmt: skip
        if start_interactive or value_stack is not None or state_stack is not None:
            return super().parse(lexer, start, value_stack, state_stack, start_interactive)
        state = ParserState(ParseConf(self.parse_table, self.callbacks, start), lexer)
        try:
            return self._run(state)
        except UnexpectedInput as err:  # as lark's loop leaves it
            err.interactive_parser = InteractiveParser(self, state, state.lexer)
            raise

    def _run(self, state: ParserState[int]) -> Any:
        actions = self.actions or self._read_table()
        callbacks = self.callbacks
        states, values = state.state_stack, state.value_stack
        end_state = state.parse_conf.end_state
        for token in _with_end(state.lexer.lex(state)):  # type: ignore[no-untyped-call]
            kind = token.type
            while True:
                action = actions[states[-1]].get(kind)
                if type(action) is int and kind != "$END":
                    states.append(action)
                    values.append(callbacks[kind](token) if kind in callbacks else token)
                    break
                if not isinstance(action, tuple):  # no action, or a shift of the end: as lark's loop fails
                    return state.feed_token(token, kind == "$END")
                size, callback, name = action
                reduced = values[-size:] if size else []
                if size:
                    del states[-size:], values[-size:]
                values.append(callback(reduced))
                states.append(actions[states[-1]][name])  # type: ignore[arg-type]
                if kind == "$END" and states[-1] == end_state:
                    return values[-1]

    def _read_table(self) -> Actions:
        """The parse table's actions, each as the loop uses it."""
        self.actions = {
            state: {
                symbol: argument if action is Shift else (len(argument.expansion), self.callbacks[argument],
                                                          argument.origin.name)
                for symbol, (action, argument) in symbols.items()
            }
            for state, symbols in self.parse_table.states.items()
        }  # fmt: skip
        return self.actions


def _with_end(tokens: Iterator[Token]) -> Iterator[Token]:
    """The tokens, then `$END` where lark's loop puts it."""
    token = None
    for token in tokens:
        yield token
    yield Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
