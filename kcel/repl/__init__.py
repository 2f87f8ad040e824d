"""`kcel repl`: author CEL policy expressions interactively, with values, types, costs and explanations.

`session` runs the input lines (`Session`); `terminal` puts a prompt in front of it (`run`).
"""

from kcel.repl.session import CommandError, Session
from kcel.repl.terminal import run, unbalanced

__all__ = ["CommandError", "Session", "run", "unbalanced"]
