"""kcel: the Common Expression Language as the Kubernetes API server runs it."""

from kcel.errors import CelError, CompileError
from kcel.parser import Parsed, parse
from kcel.values import Uint

__all__ = ["CelError", "CompileError", "Parsed", "Uint", "parse"]
