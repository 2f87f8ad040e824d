"""The REPL in a terminal: prompt_toolkit in front of a `Session` (history, multi-line input, completion,
highlighting); when the input is not a terminal, lines are read plainly, so `kcel repl < script` works too."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from kcel.libs import Library
from kcel.repl.session import CONTINUATION, PROMPT, Session

# -- the terminal --------------------------------------------------------------------------------


def run(
    k8s_version: str | None = None, history: str | None = None, kcel_version: str = "", messages: Library | None = None
) -> int:
    """The interactive loop; returns the exit status (0 after Ctrl-D or %exit). `kcel_version` is for the banner."""
    session = Session(k8s_version, messages)
    if not sys.stdin.isatty():
        return _run_plain(session)
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application.current import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.shortcuts import CompleteStyle

    history_file = history or os.path.join(os.path.expanduser("~"), ".kcel_history")
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(history_file),
        multiline=Condition(lambda: unbalanced(get_app().current_buffer.text)),
        completer=_completer(session),
        complete_style=CompleteStyle.READLINE_LIKE,  # Tab completes as far as it can, then lists the choices
        lexer=_lexer(),
        prompt_continuation=lambda width, line, wrap: CONTINUATION,
        style=_style(),
    )
    print(f"kcel {kcel_version} — CEL as the Kubernetes API server runs it.", end=" ")
    print("%help lists the commands; Ctrl-D exits.")
    while True:
        try:
            line = prompt.prompt(PROMPT)
        except KeyboardInterrupt:
            continue  # Ctrl-C drops the line being typed
        except EOFError:
            return 0
        try:
            output = session.handle(line)
        except EOFError:
            return 0
        except KeyboardInterrupt:
            output = "interrupted"
        if output:
            _print(output)


def _run_plain(session: Session) -> int:
    """Lines from a pipe or file; a line with unbalanced brackets continues on the next."""
    pending = ""
    for line in sys.stdin:
        pending += line
        if unbalanced(pending):
            continue
        try:
            output = session.handle(pending)
        except EOFError:
            return 0
        pending = ""
        if output:
            print(output, flush=True)
    return 0


def unbalanced(text: str) -> bool:
    """Whether brackets are still open (outside string literals): Enter then continues the expression."""
    depth, quote, i = 0, "", 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif text.startswith(('"""', "'''"), i):
            quote = text[i : i + 3]
            i += 2
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        i += 1
    return depth > 0 or bool(quote)


def _print(output: str) -> None:
    if sys.stdout.isatty() and "NO_COLOR" not in os.environ and (output.startswith(("error:", "ERROR:"))):
        output = f"\033[31m{output}\033[0m"
    print(output, flush=True)


def _completer(session: Session) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class SessionCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
            before = document.text_before_cursor.split("\n")[-1]
            word = re.search(r"%?[A-Za-z0-9_]*\Z", before)
            partial = word.group(0) if word else ""
            for candidate in session.completions(before):
                yield Completion(candidate, start_position=-len(partial))

    return SessionCompleter()


_TOKENS = re.compile(
    r"(?P<comment>//[^\n]*)|(?P<string>[rRbB]{0,2}(\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:\\.|[^\"\\])*\"?|'(?:\\.|[^'\\])*'?))"
    r"|(?P<number>\b\d[\d.eExXa-fA-F]*[uU]?\b)|(?P<keyword>\b(?:true|false|null|in)\b)"
    r"|(?P<command>^%[a-z]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)


def _lexer() -> Any:
    from prompt_toolkit.lexers import Lexer

    class CelLexer(Lexer):
        def lex_document(self, document: Any) -> Any:
            lines = document.lines

            def line_tokens(number: int) -> list[tuple[str, str]]:
                line, tokens, at = lines[number], [], 0
                for match in _TOKENS.finditer(line):
                    if match.start() > at:
                        tokens.append(("", line[at : match.start()]))
                    kind = match.lastgroup or ""
                    tokens.append((f"class:{kind}" if kind != "name" else "", match.group(0)))
                    at = match.end()
                tokens.append(("", line[at:]))
                return tokens

            return line_tokens

    return CelLexer()


def _style() -> Any:
    from prompt_toolkit.styles import Style

    return Style.from_dict({
        "string": "ansigreen", "number": "ansicyan", "keyword": "ansimagenta", "comment": "ansibrightblack",
        "command": "ansiblue bold",
    })  # fmt: skip
