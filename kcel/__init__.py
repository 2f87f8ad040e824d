"""kcel: the Common Expression Language as the Kubernetes API server runs it."""

import sys

from kcel.cost import CostEstimate, SizeEstimate, StringSizes
from kcel.env import Env
from kcel.errors import CelError, CompileError, CostLimitExceeded, EvalError, PlanError
from kcel.eval.program import Program
from kcel.parser import Parsed, parse
from kcel.values import Optional, TypeValue, Uint

# Trees are bounded by the parser's limits (250 levels of each kind); walking them needs a little
# more than CPython's default stack allowance.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))

__all__ = [
    "CelError", "CompileError", "CostEstimate", "CostLimitExceeded", "Env", "EvalError", "Optional", "Parsed",
    "PlanError", "Program", "SizeEstimate", "StringSizes", "TypeValue", "Uint", "parse",
]  # fmt: skip
