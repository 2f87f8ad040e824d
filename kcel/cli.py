"""The `kcel` command: evaluate and parse CEL expressions from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kcel.env import Env
from kcel.errors import CelError, CompileError
from kcel.parser import parse
from kcel.parser.unparser import dump, unparse
from kcel.values import Optional, TypeValue, Uint

DEFAULT_COST_LIMIT = 1_000_000  # the API server's per-expression limit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kcel", description="CEL as the Kubernetes API server runs it.")
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser("eval", help="evaluate an expression")
    evaluate.add_argument("expression")
    evaluate.add_argument(
        "--var", "-v", action="append", default=[], metavar="NAME=JSON", help="a variable (JSON value)"
    )
    evaluate.add_argument(
        "--file", "-f", action="append", default=[], metavar="NAME=PATH", help="a variable from a JSON/YAML file"
    )
    evaluate.add_argument("--cost", action="store_true", help="also print the runtime cost")
    evaluate.add_argument("--cost-limit", type=int, default=DEFAULT_COST_LIMIT)
    evaluate.add_argument("--show-python", action="store_true", help="print the generated Python function")
    evaluate.add_argument("--output", "-o", choices=("text", "json"), default="text")

    parse_cmd = commands.add_parser("parse", help="parse an expression and print it back (or its AST)")
    parse_cmd.add_argument("expression")
    parse_cmd.add_argument("--dump", action="store_true", help="print the AST with node ids")

    args = parser.parse_args(argv)
    try:
        if args.command == "parse":
            parsed = parse(args.expression)
            print(dump(parsed) if args.dump else unparse(parsed))
            return 0
        return _evaluate(args)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except CelError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except _UsageError as err:
        print(f"kcel: {err}", file=sys.stderr)
        return 2


class _UsageError(Exception):
    pass


def _evaluate(args: argparse.Namespace) -> int:
    variables = _variables(args.var, args.file)
    program = Env(variables={name: "dyn" for name in variables}).compile(args.expression)
    if args.show_python:
        print(program.python_source)
    value, cost = program.evaluate_with_cost(variables, cost_limit=args.cost_limit)
    if args.output == "json":
        print(json.dumps({"value": _jsonable(value), "cost": cost}))
    else:
        print(_cel_text(value))
        if args.cost:
            print(f"cost: {cost}")
    return 0


def _variables(pairs: list[str], files: list[str]) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise _UsageError(f"--var takes NAME=JSON, got {pair!r}")
        try:
            variables[name] = json.loads(text)
        except json.JSONDecodeError:
            variables[name] = text  # a bare word is a string
    for pair in files:
        name, sep, path = pair.partition("=")
        if not sep:
            raise _UsageError(f"--file takes NAME=PATH, got {pair!r}")
        variables[name] = _load(Path(path))
    return variables


def _load(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise _UsageError(f"cannot read {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise _UsageError(f"{path} is not valid JSON or YAML: {err}") from None


def _cel_text(value: Any) -> str:
    """A value as CEL would write it."""
    from kcel.parser.unparser import const_text

    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cel_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_cel_text(k)}: {_cel_text(v)}" for k, v in value.items()) + "}"
    if value is None or isinstance(value, (bool, int, float, str, bytes, Uint)):
        return const_text(value)
    return repr(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, (Optional, TypeValue)) or not isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    return value


if __name__ == "__main__":
    sys.exit(main())
