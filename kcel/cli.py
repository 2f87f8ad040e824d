"""The `kcel` command: evaluate and parse CEL expressions, check CRDs and validate custom resources."""

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

    check = commands.add_parser(
        "check",
        help="check CRDs as the API server does on create: every x-kubernetes-validations rule compiles",
        description="Example: kcel check examples/widget-crd.yaml",
    )
    check.add_argument("crds", nargs="+", metavar="CRD.yaml")
    check.add_argument("--output", "-o", choices=("text", "json"), default="text")

    validate = commands.add_parser(
        "validate",
        help="run a CRD's validation rules over custom resources (CEL rules only, for now)",
        description="Example: kcel validate --crd examples/widget-crd.yaml examples/widget.yaml",
    )
    validate.add_argument("files", nargs="+", metavar="OBJECT.yaml")
    validate.add_argument("--crd", action="append", required=True, metavar="CRD.yaml", help="CRD file (repeatable)")
    validate.add_argument("--old", metavar="OLD.yaml", help="the object before the update (validates an update)")
    validate.add_argument("--output", "-o", choices=("text", "json"), default="text")

    args = parser.parse_args(argv)
    try:
        if args.command == "parse":
            parsed = parse(args.expression)
            print(dump(parsed) if args.dump else unparse(parsed))
            return 0
        if args.command == "check":
            return _check(args)
        if args.command == "validate":
            return _validate(args)
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


def _check(args: argparse.Namespace) -> int:
    """CRD create checks; exit 1 when any CRD would be rejected."""
    from kcel.k8s import field
    from kcel.k8s.crd import count_rules, validate_crd

    reports = []
    for crd in _crds(args.crds):
        errors = validate_crd(crd)
        rules = sum(count_rules(crd.schema_of(version)) for version in crd.versions)
        message = field.invalid_status_message("CustomResourceDefinition.apiextensions.k8s.io", crd.name, errors)
        reports.append({"crd": crd.name, "rules": rules, "valid": not errors, "errors": [e.cause() for e in errors]})
        if args.output == "text":
            print(message if errors else f"{crd.name}: {rules} rules compile")
    if args.output == "json":
        print(json.dumps(reports, indent=2))
    return 0 if all(r["valid"] for r in reports) else 1


def _validate(args: argparse.Namespace) -> int:
    """Each document of each file against the CRD its apiVersion and kind name; exit 1 if any is invalid."""
    from kcel.k8s.crd import validate_object

    crds = {(crd.group, crd.kind): crd for crd in _crds(args.crd)}
    old = next(iter(_documents(args.old)), None) if args.old else None
    reports: list[dict[str, Any]] = []
    problems = 0
    for path in args.files:
        for index, obj in enumerate(_documents(path)):
            where = f"{path}: document {index}"
            group = str(obj.get("apiVersion", "")).rpartition("/")[0] if isinstance(obj, dict) else ""
            crd = crds.get((group, obj.get("kind"))) if isinstance(obj, dict) else None
            if crd is None:
                problems += 1
                reports.append({"file": where, "error": "no CRD given for this apiVersion and kind"})
                print(f"{where}: no CRD given for this apiVersion and kind", file=sys.stderr)
                continue
            try:
                result = validate_object(crd, obj, old)
            except ValueError as err:
                problems += 1
                reports.append({"file": where, "error": str(err)})
                print(f"{where}: {err}", file=sys.stderr)
                continue
            problems += bool(result.errors)
            reports.append({"file": where, "valid": not result.errors, "message": result.message,
                            "errors": [e.cause() for e in result.errors], "warnings": result.warnings})  # fmt: skip
            if args.output == "text":
                print(f"{where}: {result.message}" if result.errors else f"{where}: valid")
                for warning in result.warnings:
                    print(f"{where}: warning: {warning}")
    if args.output == "json":
        print(json.dumps(reports, indent=2))
    return 1 if problems else 0


def _crds(paths: list[str]) -> list[Any]:
    from kcel.k8s.crd import CRDLoadError, load_crds

    try:
        return [crd for path in paths for crd in load_crds(Path(path))]
    except CRDLoadError as err:
        raise _UsageError(str(err)) from None


def _documents(path: str) -> list[Any]:
    """Manifests decoded as the API server decodes them (timestamps stay strings, keys are strings)."""
    from kcel.k8s.crd import CRDLoadError, load_documents

    try:
        return load_documents(Path(path))
    except CRDLoadError as err:
        raise _UsageError(str(err)) from None


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
        variables[name] = _load(path)
    return variables


def _load(path: str) -> Any:
    """A variable's value from a file holding one JSON/YAML document."""
    documents = _documents(path)
    if len(documents) != 1:
        raise _UsageError(f"{path} holds {len(documents)} documents; a variable takes exactly one")
    return documents[0]


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
