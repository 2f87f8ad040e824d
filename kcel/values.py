"""Runtime value classes for the CEL types that have no plain Python counterpart.

Evaluation works on plain Python data (see ARCHITECTURE.md); only `uint`, `optional`, type
values, timestamps and durations (kcel.temporal) and the Kubernetes types need classes.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1
_BEYOND_64_BITS = 10**21  # more than any int64 or uint64, in either direction


def decimal_int(text: str) -> int:
    """`int(text)` of a decimal number text of any length, for Go's 64-bit parsers: a text with more than 20
    significant digits is out of every 64-bit range, so ±10**21 stands for it. Python refuses `int()` of texts over
    4,300 digits (a ValueError, not a CEL error) and takes quadratic time below that.

    >>> decimal_int("-00042"), decimal_int("9" * 5000) > UINT64_MAX, decimal_int("-" + "9" * 5000) < INT64_MIN
    (-42, True, True)
    """
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-").lstrip("0")
    return sign * (int(body or "0") if len(body) <= 20 else _BEYOND_64_BITS)


class Uint(int):
    """A CEL `uint`: an `int` that remembers it is unsigned (`1u`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"

    __str__ = __repr__


_ABSENT: Any = object()


@dataclass(frozen=True, slots=True)
class Optional:
    """A CEL `optional_type` value: `optional.of(v)` or `optional.none()`."""

    value: Any = _ABSENT

    def has_value(self) -> bool:
        return self.value is not _ABSENT

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value() else "optional.none()"


NONE = Optional()


@dataclass(frozen=True, slots=True)
class TypeValue:
    """A CEL type used as a value: what `type(x)` returns and what `int` names."""

    name: str

    def __repr__(self) -> str:
        return self.name


class TypedList(list[Any]):
    """A list whose `==` and `+` follow its own rules (Kubernetes `x-kubernetes-list-type` set/map lists).

    Everything else (indexing, iteration, `size`) is a plain list. Subclasses implement
    `cel_equals` and `cel_add`; the runtime calls them when such a list is the left operand.
    """

    __slots__ = ()

    def cel_equals(self, other: Any) -> bool:
        raise NotImplementedError

    def cel_add(self, other: Any) -> list[Any]:
        raise NotImplementedError


LIST_VIEWS: set[type] = set()
"""The ListView classes: what the runtime tests a list-like operand's class against (a set lookup, no isinstance)."""


class ListView:
    """A CEL list read in place from storage that is not a Python list (a protobuf repeated field): indexing, `size`
    and iteration reach the storage directly, so reading the field costs nothing in proportion to its length.

    A plain class registered as a `Sequence` (not derived from one): `isinstance(x, ListView)`, which the runtime
    asks of every list-like operand, stays a fast check instead of an ABC's."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        LIST_VIEWS.add(cls)

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __contains__(self, item: Any) -> bool:
        return any(item == x for x in self)

    def __reversed__(self) -> Iterator[Any]:
        return iter(list(self)[::-1])

    def index(self, item: Any) -> int:
        return list(self).index(item)

    def count(self, item: Any) -> int:
        return list(self).count(item)

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other]

    def __radd__(self, other: Any) -> list[Any]:
        return [*other, *self]


Sequence.register(ListView)


# CEL keeps map keys of different types apart (cel-go stores entries by typed value): `true`, `1`, `1u` and
# `1.0` are four keys, where a Python dict sees one. Keys are tagged with their kind, so only equal keys of
# the same kind meet; str, null and every other kind need no tag (no two of them are equal in Python).
_KEY_KINDS: dict[type, type] = {bool: bool, int: int, Uint: Uint, float: float}


def typed_key(key: Any) -> tuple[type | None, Any]:
    return _KEY_KINDS.get(key.__class__), key


class CelMap(Mapping[Any, Any]):
    """A CEL map holding keys that a dict would merge (`{1: 'a', true: 'b'}`, `{0: 1, 0u: 2}`).

    kcel keeps every other map a plain dict; the runtime switches to this class the moment a second key
    equal to an earlier one in Python but not in CEL arrives. `m[key]` finds the key of exactly that type;
    CEL's lookup, where `1` also finds `1u` and `1.0` finds `1`, is `kcel.eval.equality.map_lookup`.
    """

    __slots__ = ("entries",)

    def __init__(self, items: Iterable[tuple[Any, Any]] = ()) -> None:
        self.entries: dict[tuple[type | None, Any], tuple[Any, Any]] = {}
        for key, value in items:
            self.entries[typed_key(key)] = (key, value)

    def __getitem__(self, key: Any) -> Any:
        try:
            return self.entries[typed_key(key)][1]
        except TypeError:  # an unhashable key is in no map
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[Any]:
        return (key for key, _ in self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)

    def items(self) -> ItemsView[Any, Any]:
        return _Items(self)

    def store(self, key: Any, value: Any) -> None:
        """Add or replace the entry of exactly this key (while the map is being built)."""
        self.entries[typed_key(key)] = (key, value)

    def delete(self, key: Any) -> None:
        self.entries.pop(typed_key(key), None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        theirs = other.entries if isinstance(other, CelMap) else {typed_key(k): (k, v) for k, v in other.items()}
        return len(theirs) == len(self.entries) and all(
            typed in theirs and theirs[typed][1] == value for typed, (_, value) in self.entries.items()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "CelMap({" + ", ".join(f"{k!r}: {v!r}" for k, v in self.entries.values()) + "})"


class _Items(ItemsView[Any, Any]):
    __slots__ = ()
    _mapping: CelMap

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return iter(self._mapping.entries.values())


class ObjectFields:
    """How the evaluator treats objects it holds in place but does not define (protobuf messages): their fields,
    presence, type name, equality and zero value. kcel.proto fills this in when imported; until then no value is
    such an object (`classes` is empty)."""

    __slots__ = ("classes", "read", "test", "type_name", "equals", "is_zero", "fields")

    def __init__(self) -> None:
        self.classes: tuple[type, ...] = ()
        self.read: Callable[[Any, str], Any] = _no_object
        self.test: Callable[[Any, str], bool] = _no_object
        self.type_name: Callable[[Any], str] = _no_object
        self.equals: Callable[[Any, Any], bool] = _no_object
        self.is_zero: Callable[[Any], bool] = _no_object
        self.fields: Callable[[Any], list[tuple[str, Any]]] = _no_object
        """The fields set, as (name, CEL value): how a message prints (`pkg.Msg{name: "a"}`)."""


def _no_object(*_: Any) -> Any:
    raise AssertionError("no object class registered")


OBJECTS = ObjectFields()


def is_mapping(value: Any) -> TypeGuard[Mapping[Any, Any]]:
    """`isinstance(value, Mapping)`, asking `dict` first: the abstract-class check costs ten times more, and decoded
    JSON objects are dicts."""
    return value.__class__ is dict or isinstance(value, Mapping)
