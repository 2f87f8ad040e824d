"""kcel: the Common Expression Language as the Kubernetes API server runs it.

The names are imported on first use (`kcel.Env`, `from kcel import Env`), so that `import kcel` and the `kcel`
command start fast, and a Ctrl-C while the command starts ends it quietly.
"""

# isort: off
from kcel import interrupts  # noqa: F401  first of all: a Ctrl-C while the `kcel` command starts exits 130 quietly

# isort: on
import importlib  # no `from __future__ import annotations`: it would shadow the submodule kcel.annotations
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcel.cost import CostEstimate, SizeEstimate, StringSizes
    from kcel.env import Env
    from kcel.errors import CelError, CompileError, CostLimitExceeded, EvalError, PlanError
    from kcel.eval.program import Program
    from kcel.parser import Parsed, parse
    from kcel.values import Optional, TypeValue, Uint

# Trees are bounded by the parser's limits (250 levels of each kind); walking them needs a little
# more than CPython's default stack allowance.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))

_EXPORTS = {
    "CostEstimate": "kcel.cost", "SizeEstimate": "kcel.cost", "StringSizes": "kcel.cost", "Env": "kcel.env",
    "CelError": "kcel.errors", "CompileError": "kcel.errors", "CostLimitExceeded": "kcel.errors",
    "EvalError": "kcel.errors", "PlanError": "kcel.errors", "Program": "kcel.eval.program", "Parsed": "kcel.parser",
    "parse": "kcel.parser", "Optional": "kcel.values", "TypeValue": "kcel.values", "Uint": "kcel.values",
}  # fmt: skip

__all__ = [
    "CelError", "CompileError", "CostEstimate", "CostLimitExceeded", "Env", "EvalError", "Optional", "Parsed",
    "PlanError", "Program", "SizeEstimate", "StringSizes", "TypeValue", "Uint", "parse",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'kcel' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
