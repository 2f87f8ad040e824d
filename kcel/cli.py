"""The `kcel` command: evaluate and parse CEL expressions, check CRDs and validate custom resources."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel.env import Env
from kcel.errors import CelError, CompileError
from kcel.parser import parse
from kcel.parser.unparser import dump, unparse
from kcel.values import Optional, TypeValue, Uint

if TYPE_CHECKING:
    from kcel.k8s.manifests import Report

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
    check.add_argument("crds", nargs="+", metavar="CRD.yaml|DIR")
    check.add_argument("--output", "-o", choices=("text", "json"), default="text")
    check.add_argument(
        "--explain-above", type=float, default=10.0, metavar="PERCENT",
        help="explain the cost of expressions above this share of the per-expression limit (default 10)",
    )  # fmt: skip

    validate = commands.add_parser(
        "validate",
        help="validate custom resources as the API server would: decoding, pruning, defaulting, schema, CEL rules",
        description="Each object is checked against the CRD its apiVersion and kind name, as a create request (an "
        "update when --old holds an object of the same kind, namespace and name). Prints the API server's message "
        "for each invalid object; exit status 1 when any is invalid or cannot be read. "
        "Example: kcel validate --crd examples/widget-crd.yaml examples/widget.yaml",
    )
    validate.add_argument("files", nargs="+", metavar="FILE|DIR", help="manifests (YAML/JSON; directories recursively)")
    validate.add_argument("--crd", action="append", required=True, metavar="CRD|DIR", help="CRD files (repeatable)")
    validate.add_argument("--old", action="append", default=[], metavar="FILE|DIR", help="objects before an update")
    validate.add_argument("--subresource", choices=("status",), help="validate updates as status updates")
    validate.add_argument(
        "--validate", dest="field_validation", choices=("strict", "warn", "ignore"), default="strict",
        help="unknown and duplicate fields: reject (kubectl's default), warn, or drop silently",
    )  # fmt: skip
    validate.add_argument("--namespace", "-n", default="default", help="namespace of objects that name none")
    validate.add_argument("--verbose", "-v", action="store_true", help="also list the valid objects")
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
    """CRD create checks with every expression's estimated cost; exit 1 when any CRD would be rejected."""
    from kcel.k8s import field
    from kcel.k8s.cost import STATIC_ESTIMATED_CRD_COST_LIMIT
    from kcel.k8s.crd import check_crd, count_rules

    reports = []
    crds, problems = _crds(args.crds)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    for crd in crds:
        check = check_crd(crd)
        rules = sum(count_rules(crd.schema_of(version)) for version in crd.versions)
        costs = [_cost_report(cost, args.explain_above) for cost in check.costs]
        totals = [
            {"schema": str(path), "cost": total, "share": _share(total, STATIC_ESTIMATED_CRD_COST_LIMIT)}
            for path, total in check.totals
        ]
        report = {"crd": crd.name, "rules": rules, "valid": not check.errors,
                  "errors": [e.cause() for e in check.errors], "costs": costs, "totals": totals}  # fmt: skip
        reports.append(report)
        if args.output == "text":
            kind = "CustomResourceDefinition.apiextensions.k8s.io"
            _print_check(report, field.invalid_status_message(kind, crd.name, check.errors) if check.errors else "")
    if args.output == "json":
        print(json.dumps(reports, indent=2))
    return 0 if all(r["valid"] for r in reports) and not problems else 1


def _cost_report(cost: Any, explain_above: float) -> dict[str, Any]:
    from kcel.k8s.cost import STATIC_ESTIMATED_COST_LIMIT
    from kcel.k8s.explain import explain

    share = _share(cost.cost, STATIC_ESTIMATED_COST_LIMIT)
    return {
        "path": str(cost.path), "location": cost.location or "<root>", "expression": cost.expression,
        "estimated": cost.estimated, "cardinality": cost.cardinality, "runs": cost.effective_cardinality,
        "cost": cost.cost, "share": share,
        "compiles": (cost.compiled.message_program if cost.message else cost.compiled.program) is not None,
        "explanation": explain(cost).lines() if share > explain_above else [],
    }  # fmt: skip


def _share(cost: int, limit: int) -> float:
    """The cost as a percentage of its limit."""
    return round(100 * cost / limit, 2)


def _print_check(report: dict[str, Any], message: str) -> None:
    verdict = "accepted" if report["valid"] else "rejected"
    print(f"{report['crd']}: {verdict} ({_plural(report['rules'], 'rule')})")
    if message:
        print(f"  {message}")
    for cost in report["costs"]:
        kind = "messageExpression" if cost["path"].endswith("messageExpression") else "rule"
        runs = cost["runs"] if cost["cardinality"] is not None else f"{cost['runs']:,} (unbounded)"
        runs = f"{runs:,}" if isinstance(runs, int) else runs
        print(f"  {cost['location']} {kind}: {cost['expression']}")
        if not cost["compiles"]:
            print("    does not compile (see the error above): no cost estimate")
            continue
        print(f"    estimated cost {cost['estimated']:,} x {runs} runs = {cost['cost']:,}"
              f" ({_share_text(cost['share'])} the per-expression limit)")  # fmt: skip
        for line in cost["explanation"]:
            print(f"    - {line}")
    for total in report["totals"]:
        print(f"  total {total['cost']:,} ({_share_text(total['share'])} the per-CRD limit) for {total['schema']}")


def _share_text(share: float) -> str:
    return f"{share}% of" if share < 1000 else f"{share / 100:,.0f} times"


def _validate(args: argparse.Namespace) -> int:
    """Every object of every file against its CRD; exit 1 if any is invalid or unreadable, 2 on bad paths."""
    from kcel.k8s.manifests import Catalog, OldObjects, Options, manifest_files, validate_files

    try:
        catalog = Catalog.load(args.crd)
        files = manifest_files(args.files)
        old = OldObjects(_old_objects(args.old), args.namespace)
    except FileNotFoundError as err:
        raise _UsageError(str(err)) from None
    for problem in catalog.problems:
        print(f"error: {problem}", file=sys.stderr)
    options = Options(args.field_validation.capitalize(), args.namespace, args.subresource)
    reports: list[Report] = []
    with _Progress(len(files)) as progress:
        for path in files:
            for report in validate_files([path], catalog, options, old):
                reports.append(report)
                if args.output == "text":
                    progress.clear()
                    _print_report(report, args.verbose)
            progress.advance()
    if args.output == "json":
        print(json.dumps([r.as_json() for r in reports], indent=2))
    counts = {status: sum(r.status == status for r in reports) for status in ("valid", "invalid", "error")}
    summary = f"{_plural(len(reports), 'object')} in {_plural(len(files), 'file')}"
    print(f"{summary}: {counts['valid']} valid, {counts['invalid']} invalid, {counts['error']} not validated",
          file=sys.stderr)  # fmt: skip
    return 1 if counts["invalid"] or counts["error"] or catalog.problems else 0


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _print_report(report: Report, verbose: bool) -> None:
    if report.status == "error":
        print(f"{report.where}: error: {report.message}", file=sys.stderr)
    elif report.status == "invalid":
        print(f"{report.where}: {report.message}")
    elif verbose:
        print(f"{report.where}: {report.kind} {json.dumps(report.name)} is valid")
    for warning in report.warnings:
        print(f"{report.where}: warning: {warning}")


def _old_objects(paths: list[str]) -> list[Any]:
    """The objects of the --old files (Lists expanded)."""
    from kcel.k8s.manifests import manifest_files

    objects: list[Any] = []
    for path in manifest_files(paths):
        for document in _documents(str(path)):
            if isinstance(document, dict) and document.get("kind") == "List":
                objects += [item for item in document.get("items") or [] if isinstance(item, dict)]
            elif isinstance(document, dict):
                objects.append(document)
    return objects


class _Progress:
    """A one-line progress bar on stderr, only on a terminal and only for many files (never in CI logs)."""

    MIN_FILES = 20
    WIDTH = 30

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.shown = total >= self.MIN_FILES and sys.stderr.isatty()

    def __enter__(self) -> _Progress:
        self.draw()
        return self

    def __exit__(self, *exc: object) -> None:
        self.clear()

    def advance(self) -> None:
        self.done += 1
        self.draw()

    def draw(self) -> None:
        if self.shown:
            filled = self.WIDTH * self.done // max(self.total, 1)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            print(f"\r[{bar}] {self.done}/{self.total} files", end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _crds(paths: list[str]) -> tuple[list[Any], list[str]]:
    """The CRDs in the files and directories given, and a one-line problem for each file that could not be read."""
    from kcel.k8s.crd import CRDLoadError, load_crds
    from kcel.k8s.manifests import manifest_files

    try:
        files = manifest_files(paths)
    except FileNotFoundError as err:
        raise _UsageError(str(err)) from None
    crds, problems = [], []
    for path in files:
        try:
            crds += load_crds(path)
        except CRDLoadError as err:
            problems.append(str(err))
    return crds, problems


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
