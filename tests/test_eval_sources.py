"""The generated source of a program is in `linecache` while the program lives (tracebacks and pdb show its lines),
and goes with it (issue 43: a webhook reloading policies or an editor session grew by every version compiled)."""

from __future__ import annotations

import gc
import linecache
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import kcel

ENV = kcel.Env(variables={"x": "int", "s": "string"})


class Broken(Exception):
    """Not a CEL error: the evaluation ends with an internal error raised from it, with its frames."""


class BrokenActivation(Mapping[str, Any]):
    """An activation whose every read fails, to see a traceback through the generated code."""

    def __getitem__(self, key: str) -> Any:
        raise Broken(key)

    def get(self, key: str, default: Any = None) -> Any:
        raise Broken(key)

    def __iter__(self) -> Iterator[str]:
        return iter(["x"])

    def __len__(self) -> int:
        return 1


def generated_frames(evaluate: Any) -> list[traceback.FrameSummary]:
    """The frames of the generated code in the traceback of `evaluate` on an activation that fails (an internal
    error, raised from the exception)."""
    with pytest.raises(kcel.EvalError, match="^internal error: [a-z]$") as raised:  # the variable read
        evaluate(BrokenActivation())
    assert isinstance(raised.value.__cause__, Broken)
    frames = traceback.extract_tb(raised.value.__cause__.__traceback__)
    return [frame for frame in frames if frame.filename.startswith("<kcel:")]


def kcel_sources() -> set[str]:
    return {name for name in linecache.cache if name.startswith("<kcel:")}


def test_tracebacks_show_the_generated_lines_until_the_program_is_gone() -> None:
    program = ENV.compile("x * 1234567 + 7654321 > 0")  # a source no other test compiles
    frames = generated_frames(program.evaluate)
    frames += generated_frames(program.evaluate_with_cost)
    assert {frame.filename.split(":")[1] for frame in frames} == {"fast", "metered"}
    for frame in frames:
        assert "_act" in (frame.line or ""), frame  # the line that read the activation, from linecache
    names = {frame.filename for frame in frames}
    del program, frames
    gc.collect()
    assert not names & set(linecache.cache)


def test_a_program_s_source_leaves_linecache_with_it() -> None:
    gc.collect()
    before = kcel_sources()
    programs = [ENV.compile(f"x + {i} > 98765") for i in range(50)]
    for program in programs:
        assert program.evaluate({"x": 1}) is False
        assert program.evaluate_with_cost({"x": 1})[0] is False
    compiled = kcel_sources() - before
    assert len(compiled) == 100  # a fast and a metered variant each
    del programs, program
    gc.collect()
    assert not kcel_sources() & compiled


def test_programs_with_the_same_source_share_its_entry_until_the_last_is_gone() -> None:
    first, second = ENV.compile("s + 'shared-source' == ''"), ENV.compile("s + 'shared-source' == ''")
    assert first.evaluate({"s": ""}) is False and second.evaluate({"s": ""}) is False
    (name,) = {frame.filename for frame in generated_frames(first.evaluate)}
    del first
    gc.collect()
    assert "'shared-source'" in "".join(linecache.getlines(name))
    del second
    gc.collect()
    assert name not in linecache.cache
