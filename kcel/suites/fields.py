"""Reading a suite document field by field, so that every problem names its file, document and field path.

A suite is read without a JSON Schema validator: `Fields` checks each mapping's keys against the ones it
knows and each value's shape, and raises `SuiteError` with a one-line message such as
`suites/widget.kcel-test.yaml: document 0: cases[2].expect.errors[0]: must be a string`. Reading goes on past a
problem where it can (`attempt`), so that `SuiteErrors` brings every problem of a document at once; a misspelt key
or word gets the nearest one it could be (`did_you_mean`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from kcel.k8s import field as fe
from kcel.k8s.manifests.yamltext import Lines


class SuiteError(ValueError):
    """A suite that cannot be read or prepared; `str()` is one line naming the file, the document and the field."""

    def __init__(self, where: Where, path: fe.Path, problem: str) -> None:
        self.where, self.path, self.problem = where, path, problem
        self.detail = f"{_text(path)}: {problem}" if path.elements else problem
        super().__init__(f"{where}: {self.detail}")

    def located(self, lines: SuiteLines | None = None) -> str:
        """The message with the field's line when it can be found: `file:12: document 0: cases[2].objekt: ...`
        (editors and CI logs link `file:line`); `lines`: the suite files' lines, shared by many messages."""
        line = (lines or SuiteLines()).line(self.where, self.path)
        if line is None:
            return str(self)
        return f"{self.where.file}:{line}: document {self.where.document}: {self.detail}"

    def every(self) -> tuple[SuiteError, ...]:
        """The problems this error brings: itself (`SuiteErrors` brings several)."""
        return (self,)


class SuiteErrors(SuiteError):
    """Several problems of one suite, found in one reading, so that a user fixes them all in one go; it reads as
    its first problem where one SuiteError is expected."""

    def __init__(self, errors: Sequence[SuiteError]) -> None:
        self.errors = tuple(one for error in errors for one in error.every())
        first = self.errors[0]
        super().__init__(first.where, first.path, first.problem)

    def every(self) -> tuple[SuiteError, ...]:
        return self.errors


class SuiteLines:
    """The lines of fields in suite files, each file read and each document composed once for every message or
    report that names a line in it (once a case, a suite of many failing cases would be parsed once a case)."""

    def __init__(self, texts: Mapping[Path, str] | None = None) -> None:
        """`texts`: files already read (an editor's unsaved text, for kcel lsp); the others are read when asked."""
        self._files = {file: Lines(text) for file, text in (texts or {}).items()}

    def line(self, where: Where, path: fe.Path) -> int | None:
        """The 1-based line of a field of a suite document, when the file reads and the field is found."""
        if where.file not in self._files:
            try:
                text = where.file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""  # no document, so no line: the messages go without one
            self._files[where.file] = Lines(text)
        return self._files[where.file].line(where.document, path)


def located(errors: Iterable[SuiteError]) -> list[str]:
    """Each problem's message at its line, the files read once for all of them."""
    lines = SuiteLines()
    return [error.located(lines) for error in errors]


def raise_every(errors: Sequence[SuiteError]) -> None:
    """Raise the problems found, if any: one as itself, several together."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise SuiteErrors(errors)


T = TypeVar("T")
P = ParamSpec("P")


def attempt(errors: list[SuiteError], read: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
    """`read(...)`, or None with its problems added to `errors`: reading goes on, to find the other problems too."""
    try:
        return read(*args, **kwargs)
    except SuiteError as err:
        errors.extend(err.every())
        return None


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """` (did you mean valid?)` when a misspelt word is close to one of `choices`, else nothing."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


@dataclass(frozen=True)
class Where:
    """A document of a suite file: `file: document N` in messages."""

    file: Path
    document: int = 0

    def __str__(self) -> str:
        return f"{self.file}: document {self.document}"


def _text(path: fe.Path) -> str:
    return str(path) if path.elements else "<root>"


def kind_of(value: Any) -> str:
    """A value's kind as YAML users know it (for `must be a string, not a list`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, Mapping) else type(value).__name__


@dataclass(frozen=True)
class Fields:
    """A mapping being read and where it is; accessors check shapes and raise SuiteError naming the field."""

    data: Mapping[str, Any]
    where: Where
    path: fe.Path = fe.Path()

    @classmethod
    def of(cls, value: Any, where: Where, path: fe.Path | None = None) -> Fields:
        path = path if path is not None else fe.Path()
        if not isinstance(value, Mapping):
            raise SuiteError(where, path, f"must be a mapping, not {kind_of(value)}")
        return cls(value, where, path)

    def at(self, key: str) -> fe.Path:
        return self.path.child(key)

    def error(self, key: str, problem: str) -> SuiteError:
        return SuiteError(self.where, self.at(key), problem)

    def known(self, keys: Iterable[str]) -> None:
        """Reject keys other than `keys` (a misspelt field must never be ignored silently)."""
        allowed = tuple(keys)
        errors = []
        for key in self.data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                guess = f"did you mean {close[0]}? " if close else ""
                errors.append(self.error(str(key), f"unknown field ({guess}known here: {', '.join(allowed)})"))
        raise_every(errors)

    def has(self, key: str) -> bool:
        return key in self.data

    def value(self, key: str) -> Any:
        return self.data.get(key)

    def string(self, key: str, required: bool = False, choices: tuple[str, ...] = ()) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(key, "required")
            return None
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, not {kind_of(value)}")
        if choices and value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}, not {value!r}{did_you_mean(value, choices)}")
        return value

    def boolean(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {kind_of(value)}")
        return value

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.error(key, f"must be an integer, not {kind_of(value)}")
        return value

    def strings(self, key: str) -> tuple[str, ...] | None:
        """A string or a list of strings (one item may be written without the list)."""
        value = self.data.get(key)
        if value is None:
            return None
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.error(key, f"must be a string or a list of strings, not {kind_of(value)}")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise SuiteError(self.where, self.at(key).index(i), f"must be a string, not {kind_of(item)}")
        return tuple(items)

    def mapping(self, key: str) -> Fields | None:
        value = self.data.get(key)
        return None if value is None else Fields.of(value, self.where, self.at(key))

    def string_map(self, key: str) -> dict[str, str] | None:
        fields = self.mapping(key)
        if fields is None:
            return None
        for name, value in fields.data.items():
            if not isinstance(value, str):
                raise SuiteError(self.where, fields.path.key(str(name)), f"must be a string, not {kind_of(value)}")
        return dict(fields.data)

    def items(self, key: str, required: bool = False) -> Iterator[tuple[fe.Path, Any]]:
        """(path, item) of a list; `required` lists must have at least one item."""
        value = self.data.get(key)
        if value is None and not required:
            return
        if not isinstance(value, list) or (required and not value):
            raise self.error(key, "must be a list with at least one item" if required else "must be a list")
        for i, item in enumerate(value):
            yield self.at(key).index(i), item
