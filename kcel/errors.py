"""Compile-time errors, rendered exactly as cel-go renders them.

Kubernetes users read these strings in `kubectl` output, so the layout follows cel-go's
`common/error.go`: `ERROR: <input>:L:C: message`, the source line, and a caret line where
multi-byte characters are drawn with full-width dots and carets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_MAX_SNIPPET = 16384
_MAX_REPORTED = 100


@dataclass(frozen=True, slots=True)
class Source:
    """Expression text with its line starts, for offset -> (line, column) lookups."""

    text: str
    description: str = "<input>"

    def location(self, offset: int) -> tuple[int, int]:
        """Return the 1-based line and 0-based column (in code points) of an offset."""
        if offset < 0:
            return -1, -1
        line = self.text.count("\n", 0, offset) + 1
        line_start = self.text.rfind("\n", 0, offset) + 1
        return line, offset - line_start

    def snippet(self, line: int) -> str | None:
        lines = self.text.split("\n")
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


@dataclass(frozen=True, slots=True)
class Issue:
    """One error: a message at a source offset (-1 when the error has no position)."""

    message: str
    offset: int = -1
    expr_id: int = 0

    def render(self, source: Source) -> str:
        line, column = source.location(self.offset)
        head = f"ERROR: {source.description}:{line}:{column + 1}: {self.message}"
        snippet = source.snippet(line) if line > 0 else None
        if snippet is None or len(snippet.encode()) > _MAX_SNIPPET:
            return head
        snippet = snippet.replace("\t", " ")
        marks = "".join("\uff0e" if ord(ch) > 0x7F else "." for ch in snippet[:column])
        at = snippet[column : column + 1]
        caret = "\uff3e" if at and ord(at) > 0x7F else "^"
        return f"{head}\n | {snippet}\n | {marks}{caret}"


class CelError(Exception):
    """Base class of every error kcel raises on purpose."""


class CompileError(CelError):
    """An expression failed to parse or type-check; `str()` renders it like cel-go."""

    def __init__(self, issues: Sequence[Issue], source: Source) -> None:
        self.issues = tuple(sorted(issues, key=lambda i: source.location(i.offset)))
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        shown = [issue.render(self.source) for issue in self.issues[:_MAX_REPORTED]]
        if len(self.issues) > _MAX_REPORTED:
            shown.append(f"{len(self.issues) - _MAX_REPORTED} more errors were truncated")
        return "\n".join(shown)

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(issue.message for issue in self.issues)


class PlanError(CelError):
    """The expression checked but its program cannot be built: a literal argument failed a check
    made when the program is created, e.g. a bad regex pattern or `int('x')` (cel-go reports these
    as "program instantiation failed")."""


class EvalError(CelError):
    """An evaluation error (cel-go's `types.Err`): a message and the id of the failing step.

    Library implementations raise it with just a message; generated code fills in the id.
    """

    def __init__(self, message: str, expr_id: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.expr_id = expr_id
        self.cost: int | None = None  # set by a metered evaluation: the cost spent up to the error

    def __str__(self) -> str:
        return self.message


class EvaluationStopped(EvalError):
    """An error that ends the evaluation where it happens: no `&&`, `||`, `?:` or macro absorbs it, and nothing more
    is charged."""


class CostLimitExceeded(EvaluationStopped):
    """The running cost went past the limit; cel-go's text, so callers can match it."""

    def __init__(self, cost: int = 0) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")
        self.cost = cost


class RecoveredPanic(EvaluationStopped):
    """A Go panic inside cel-go that `Program.Eval` recovers and reports as `internal error: ...`; kcel answers as
    the API server does (tests/golden/README.md lists each)."""
