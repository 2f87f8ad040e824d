"""`no such overload` in cel-go's words: which text a call gets when no overload takes its arguments at run time."""

from __future__ import annotations

from collections.abc import Sequence

# cel-go binds the arithmetic and ordering operators and size() once for all their overloads, guarded by a trait of
# the first operand (common/stdlib/standard.go, the same since v0.17): without it the answer is `no such overload:
# <function>`, unless its type takes method calls (traits.ReceiverType: string, duration, timestamp), whose Receive
# answers plain `no such overload`; with it, the operand's own method rejects the other operand, plainly.
_TRAIT_OF = {
    "_+_": "adder", "_-_": "subtractor", "_*_": "multiplier", "_/_": "divider", "_%_": "modder", "-_": "negator",
    "_<_": "comparer", "_<=_": "comparer", "_>_": "comparer", "_>=_": "comparer", "size": "sizer",
    "sort": "lister", "@sortByAssociatedKeys": "lister",  # the lists extension's singletons (ext/lists.go)
}  # fmt: skip
_TRAITS: dict[str, frozenset[str]] = {
    name: frozenset(traits.split())
    for name, traits in {
        "bool": "comparer negator",
        "bytes": "adder comparer sizer",
        "double": "adder comparer divider multiplier negator subtractor",
        "google.protobuf.Duration": "adder comparer negator receiver subtractor",
        "int": "adder comparer divider modder multiplier negator subtractor",
        "string": "adder comparer matcher receiver sizer",
        "google.protobuf.Timestamp": "adder comparer receiver subtractor",
        "uint": "adder comparer divider modder multiplier subtractor",
        "list": "adder sizer lister",
        "map": "sizer",
    }.items()
}
# Functions whose one binding takes any operand and rejects it plainly (DisableTypeGuards: contains, startsWith,
# endsWith; singletons without a trait); `matches` with a literal pattern is planned that way too (regex optimization).
_PLAIN_FUNCTIONS = frozenset({
    "contains", "startsWith", "endsWith", "matches", "!_", "@in", "_==_", "_!=_", "type", "dyn", "_?_:_", "_&&_",
    "_||_", "@not_strictly_false",
})  # fmt: skip


def no_such_overload(function: str, arg_types: Sequence[str]) -> str:
    """An operator's trait check; a type guard that names the function and the arguments' types
    (decls.MaybeNoSuchOverload); or plain, for bindings that check their operands themselves.

    >>> no_such_overload("_+_", ["bool", "int"]), no_such_overload("_+_", ["int", "string"])
    ('no such overload: _+_', 'no such overload')
    >>> no_such_overload("charAt", ["int", "int"])
    'no such overload: charAt(int, int)'
    """
    trait = _TRAIT_OF.get(function)
    if trait is not None:
        traits = _TRAITS.get(arg_types[0], frozenset()) if arg_types else frozenset()
        return "no such overload" if trait in traits or "receiver" in traits else f"no such overload: {function}"
    if function in _PLAIN_FUNCTIONS:
        return "no such overload"
    if function == "flatten":  # its bindings check the operands themselves (ext/lists.go, `%v.flatten(%v)`)
        return f"no such overload: {arg_types[0]}.flatten({', '.join(arg_types[1:])})"
    return f"no such overload: {function}({', '.join(arg_types)})"
