"""The `kcel` command: evaluate and parse CEL expressions, check CRDs and validate custom resources."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel import colour, interrupts
from kcel.env import Env
from kcel.errors import CelError, CompileError
from kcel.eval.display import cel_text, json_value, result_type
from kcel.k8s.environment import NEWEST, add_version_option
from kcel.parser import parse
from kcel.parser.unparser import dump, unparse

if TYPE_CHECKING:
    from kcel.k8s.crds.validate import Report

DEFAULT_COST_LIMIT = 1_000_000  # the API server's per-expression limit
CI_OUTPUTS = ("text", "json", "github", "sarif", "junit")


EVAL_EXAMPLES = """\
examples:
  kcel eval '1 + 1'
  kcel eval --var 'x=[1, 2, 3]' 'x.map(n, n * 2)'
  kcel eval --decl 'name:string' --var name=kcel "name.startsWith('k')"
  kcel eval --input self=examples/deployment.yaml --cost 'self.spec.replicas <= self.spec.maxReplicas'
  kcel eval --explain --input self=examples/deployment.yaml \\
      "self.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))"
  kcel eval --k8s-version 1.34 "quantity('1Gi').isGreaterThan(quantity('512Mi'))"
  kcel eval --env mutating-policy --input object=examples/deployment.yaml \
      '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/team"), value: "a"}]'
"""


ENVIRONMENT_NAMES = ("crd", "validating-policy", "mutating-policy", "webhook-match", "dra-selector", "authn-claims",
                     "authn-user", "authz-match")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    """The `kcel` command line (argparse; every subcommand's help ends with working examples)."""
    parser = argparse.ArgumentParser(
        prog="kcel",
        description="CEL as the Kubernetes API server runs it: evaluate expressions, check CRDs, validate objects.",
        epilog="examples:\n  kcel eval '1 + 1'\n  kcel check examples/widget-crd.yaml\n"
        "  kcel validate --crd examples/widget-crd.yaml examples/widget.yaml\n  kcel test examples/\n  kcel repl\n\n"
        "Run 'kcel COMMAND --help' for a command's options and more examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    _add_color_option(parser, "auto")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    evaluate = _command(commands, "eval", "evaluate an expression", EVAL_EXAMPLES)
    evaluate.add_argument("expression")
    evaluate.add_argument(
        "--var",
        "-v",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a variable's value as JSON (a bare word is a string)",
    )
    evaluate.add_argument(
        "--input",
        "-i",
        "--file",
        "-f",
        dest="inputs",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        help="a variable's value from a JSON/YAML file; without NAME= the "
        "file holds a mapping of variable names to values",
    )
    evaluate.add_argument(
        "--decl",
        "-d",
        action="append",
        default=[],
        metavar="NAME:TYPE",
        help="declare a variable's type (e.g. 'self:map(string, int)'); undeclared ones are dyn",
    )
    evaluate.add_argument(
        "--messages", action="append", default=[], metavar="FILE",
        help="protobuf message types: a FileDescriptorSet (protoc --include_imports --descriptor_set_out=FILE, or "
        "its JSON); variables declared with a message type take their values in protobuf's JSON (kcel[protobuf])",
    )  # fmt: skip
    add_version_option(evaluate)
    evaluate.add_argument(
        "--env", metavar="NAME", choices=ENVIRONMENT_NAMES,
        help="the CEL environment of a place Kubernetes runs CEL, with its variables and libraries: "
        + ", ".join(ENVIRONMENT_NAMES),
    )  # fmt: skip
    evaluate.add_argument("--cost", action="store_true", help="also print the runtime cost (cel-go's units)")
    evaluate.add_argument(
        "--cost-limit",
        type=int,
        default=DEFAULT_COST_LIMIT,
        metavar="N",
        help=f"stop past this runtime cost (default {DEFAULT_COST_LIMIT:,}, the API server's)",
    )
    evaluate.add_argument(
        "--explain",
        action="store_true",
        help="show the value of every subexpression and what decided &&, ||, ?: and macros",
    )
    evaluate.add_argument("--show-python", action="store_true", help="print the generated Python function")
    evaluate.add_argument("--output", "-o", choices=("text", "json"), default="text")

    parse_cmd = _command(commands, "parse", "parse an expression and print it back (or its AST)",
                         "examples:\n  kcel parse 'a.all(x, x > 0)'\n  kcel parse --dump 'a.b + 1'\n")  # fmt: skip
    parse_cmd.add_argument("expression")
    parse_cmd.add_argument("--dump", action="store_true", help="print the AST with node ids")

    check = _command(
        commands, "check",
        "check CRDs, admission policies, webhook configurations, DRA device classes and claims, authentication and "
        "authorization configuration as the API server does on create (or load): CEL compiles, costs fit the limits",
        "examples:\n  kcel check examples/widget-crd.yaml\n  kcel check examples/expensive-crd.yaml\n"
        "  kcel check -o json crds/\n  kcel check examples/\n\n"
        "Exit status: 0 accepted (or nothing to check, unless --strict), 1 rejected or unreadable, 2 bad usage.\n",
    )  # fmt: skip
    check.add_argument("crds", nargs="+", metavar="FILE|DIR")
    check.add_argument("--strict", action="store_true",
                       help="fail when nothing in the files holds CEL to check (by default that is said, and passes: "
                       "a pre-commit hook given only samples)")  # fmt: skip
    check.add_argument("--output", "-o", choices=CI_OUTPUTS, default="text",
                       help="github: workflow commands, shown on the file and line by GitHub Actions; sarif: SARIF "
                       "2.1.0, for code scanning; junit: JUnit XML, a test case per CRD or object")  # fmt: skip
    add_version_option(check)
    check.add_argument(
        "--explain-above", type=float, default=10.0, metavar="PERCENT",
        help="explain the cost of expressions above this share of the per-expression limit (default 10)",
    )  # fmt: skip

    validate = _command(
        commands, "validate",
        "validate custom resources as the API server would: decoding, pruning, defaulting, schema, CEL rules",
        "Each object is checked against the CRD its apiVersion and kind name, as a create request (an update "
        "when --old holds an object of the same kind, namespace and name).\n\nexamples:\n"
        "  kcel validate --crd examples/widget-crd.yaml examples/widget.yaml\n"
        "  kcel validate --crd crds/ --old before/ after/\n\n"
        "Exit status: 0 all valid, 1 any invalid or unreadable, 2 bad usage.\n",
    )  # fmt: skip
    validate.add_argument("files", nargs="+", metavar="FILE|DIR", help="manifests (YAML/JSON; directories recursively)")
    validate.add_argument("--crd", action="append", required=True, metavar="CRD|DIR", help="CRD files (repeatable)")
    validate.add_argument("--old", action="append", default=[], metavar="FILE|DIR", help="objects before an update")
    validate.add_argument("--subresource", choices=("status",), help="validate updates as status updates")
    validate.add_argument(
        "--validate", dest="field_validation", choices=("strict", "warn", "ignore"), default="strict",
        help="unknown and duplicate fields: reject (kubectl's default), warn, or drop silently",
    )  # fmt: skip
    validate.add_argument("--namespace", "-n", default="default", help="namespace of objects that name none")
    validate.add_argument(
        "--jobs", "-j", type=_positive, default=os.cpu_count() or 1, metavar="N",
        help="worker processes for many files (default: one per CPU); the output keeps file order",
    )  # fmt: skip
    validate.add_argument("--skip-kind", action="append", default=[], metavar="KIND[,KIND]",
                          help="do not validate documents of these kinds (repeatable)")  # fmt: skip
    validate.add_argument("--strict", action="store_true",
                          help="documents no CRD given types (kustomization files, RBAC, built-in kinds) are errors; "
                          "by default they are skipped and counted")  # fmt: skip
    validate.add_argument("--verbose", "-v", action="store_true", help="also list the valid and skipped objects")
    validate.add_argument("--output", "-o", choices=CI_OUTPUTS, default="text",
                          help="github: workflow commands, shown on the file and line by GitHub Actions; sarif: "
                          "SARIF 2.1.0, for code scanning; junit: JUnit XML, a test case per object")  # fmt: skip
    add_version_option(validate)

    from kcel.k8s.admission import command as admit_command
    from kcel.k8s.surfaces import command as surface_command
    from kcel.suites import command as test_command
    from kcel.webhook import command as serve_command

    admit_command.configure(_command(
        commands, "admit", "decide as the API server's Mutating- and ValidatingAdmissionPolicies would, offline", ""
    ))  # fmt: skip
    for name, (summary, configure) in surface_command.COMMANDS.items():
        configure(_command(commands, name, summary, ""))
    test_command.configure(_command(
        commands, "test", "run suites of cases (CRDs, admission policies, webhook matchConditions, DRA selectors, "
        "authentication and authorization configuration) as the API server would answer them", ""
    ))  # fmt: skip
    serve_command.configure(_command(
        commands, "serve", "run an admission webhook that enforces Validating- and MutatingAdmissionPolicies",
        "examples:\n  kcel serve --policies examples/admission/policies --cert tls.crt --key tls.key\n"
        "  kcel serve --policies policies/ --insecure-http --port 8080   # local testing only\n",
    ))  # fmt: skip

    repl = _command(commands, "repl", "author policy expressions interactively (types, costs, explanations)",
                    "examples:\n  kcel repl\n  kcel repl --k8s-version 1.34\n\nType %help inside.\n")  # fmt: skip
    completion = _command(commands, "completion", "print a shell completion script",
                          "examples:\n  source <(kcel completion bash)          # in ~/.bashrc\n"
                          "  kcel completion zsh > \"${fpath[1]}/_kcel\"\n"
                          "  kcel completion fish > ~/.config/fish/completions/kcel.fish\n")  # fmt: skip
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    language_server = _command(commands, "lsp", "serve the Language Server Protocol for editors (pip install "
                               "'kcel[lsp]')", "examples:\n  kcel lsp                 # stdio, as editors start it\n"
                               "  kcel lsp --tcp 127.0.0.1:2087   # for debugging\n")  # fmt: skip
    language_server.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    add_version_option(repl)
    repl.add_argument("--history", metavar="FILE", help="history file (default ~/.kcel_history)")
    repl.add_argument("--messages", action="append", default=[], metavar="FILE",
                      help="protobuf message types from a FileDescriptorSet, as for kcel eval")  # fmt: skip
    return parser


def _language_server(tcp: str | None) -> int:
    try:
        from kcel.lsp.server import main as serve_language
    except ImportError:
        print("kcel lsp needs pygls: pip install 'kcel[lsp]'", file=sys.stderr)
        return 2
    return serve_language(tcp)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return int(text)


def _command(commands: Any, name: str, summary: str, epilog: str) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=summary[0].upper() + summary[1:] + ".", epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    _add_color_option(command, argparse.SUPPRESS)  # after the command too: `kcel check --color never`
    return command


def _add_color_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument("--color", choices=colour.CHOICES, default=default,
                        help="colour the output: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
                        "always or never")  # fmt: skip


def package_version() -> str:
    """kcel's installed version (`kcel --version`, the REPL's banner)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kcel")
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    """Run one command. A reader that goes away (`kcel ... | head`) ends it quietly with 141, as SIGPIPE would
    end a C program; Ctrl-C with 130."""
    interrupts.restore()
    try:
        code = _run(argv)
        if not sys.stdout.closed:  # a language server's client may have closed it already
            sys.stdout.flush()  # here, so a closed pipe is noticed before the interpreter's own flush at exit
        return code
    except BrokenPipeError:
        _discard_stdout()
        return 141
    except KeyboardInterrupt:
        return 130


def _discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for the closed pipe is dropped, not written at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (an embedding caller's): nothing to protect
        pass


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    colour.choose(args.color)
    try:
        if args.command == "parse":
            parsed = parse(args.expression)
            print(dump(parsed) if args.dump else unparse(parsed))
            return 0
        if args.command == "completion":
            from kcel.completion import script

            print(script(build_parser(), args.shell), end="")
            return 0
        if args.command == "check":
            return _check(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "admit":
            from kcel.k8s.admission import command as admit_command

            return admit_command.run(args)
        if getattr(args, "surface_command", None):
            from kcel.k8s.surfaces import command as surface_command

            return surface_command.run(args)
        if args.command == "test":
            from kcel.suites import command as test_command

            return test_command.run(args)
        if args.command == "serve":
            from kcel.webhook import command as serve_command

            return serve_command.run(args)
        if args.command == "lsp":
            return _language_server(args.tcp)
        if args.command == "repl":
            from kcel.repl import run

            messages = _message_library(args.messages) if args.messages else None
            return run(args.k8s_version, args.history, package_version(), messages)
        return _evaluate(args)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except CelError as err:
        print(f"{_style.red('error')}: {err}", file=sys.stderr)
        return 1
    except _UsageError as err:
        print(f"kcel: {err}", file=sys.stderr)
        return 2


class _UsageError(Exception):
    pass


def _evaluate(args: argparse.Namespace) -> int:
    variables = _variables(args.var, args.inputs)
    declared = dict(_declaration(d) for d in args.decl)
    try:
        if args.env:
            from kcel.k8s.surfaces.environments import environment

            env = environment(args.env, args.k8s_version)
            given = {name: "dyn" for name in variables if not env.is_variable(name)}
            env = env.extend({**given, **declared})
        else:
            given = {name: "dyn" for name in variables}
            registry = _messages(args.messages) if args.messages else None
            env = Env(variables={**given, **declared}, k8s_version=args.k8s_version or NEWEST,
                      messages=[registry] if registry is not None else None)  # fmt: skip
            if registry is not None:
                variables = _message_values(registry, variables, declared)
    except ValueError as err:  # an unknown type name or Kubernetes version
        raise _UsageError(str(err)) from None
    program = env.compile(args.expression)
    if args.show_python:
        print(program.python_source)
    try:
        value, cost = program.evaluate_with_cost(variables, cost_limit=args.cost_limit)
    except CelError:
        if args.explain:
            print(program.explain(variables).text())
        raise
    type_name = result_type(program.output_type, value)
    if args.output == "json":
        record = {"value": json_value(value), "type": type_name, "cost": cost}
        if args.explain:
            record["explanation"] = program.explain(variables).root.as_json()
        print(json.dumps(record))
        return 0
    print(f"{cel_text(value)} {_style.dim(': ' + type_name)}")
    if args.cost:
        print(f"cost: {cost}")
    if args.explain:
        print(program.explain(variables).text())
    return 0


def _messages(paths: list[str]) -> Any:
    """The message types of descriptor-set files (`--messages`)."""
    try:
        from kcel.proto.registry import Messages
    except ImportError as err:
        raise _UsageError(str(err)) from None
    try:
        return Messages([Path(path) for path in paths])
    except OSError as err:
        raise _UsageError(f"--messages: {err.strerror}: {err.filename}") from None
    except Exception as err:  # not a descriptor set: protobuf's DecodeError, ParseError, TypeError...
        raise _UsageError(f"--messages: not a FileDescriptorSet: {err}") from None


def _message_library(paths: list[str]) -> Any:
    from kcel.proto.library import protobuf_library

    return protobuf_library(_messages(paths))


def _message_values(registry: Any, variables: dict[str, Any], declared: dict[str, str]) -> dict[str, Any]:
    """Variables declared with a message type, their JSON values as messages (protobuf's JSON mapping)."""
    converted = dict(variables)
    for name, type_name in declared.items():
        if type_name in registry.descriptors and name in variables:
            try:
                converted[name] = registry.from_json(type_name, variables[name])
            except Exception as err:  # json_format.ParseError names the field
                raise _UsageError(f"{name}: not a {type_name} in protobuf's JSON: {err}") from None
    return converted


def _declaration(text: str) -> tuple[str, str]:
    name, sep, type_text = text.partition(":")
    if not sep or not name.strip() or not type_text.strip():
        raise _UsageError(f"--decl takes NAME:TYPE (e.g. 'self:list(string)'), got {text!r}")
    return name.strip(), type_text.strip()


class _Style:
    """ANSI colour as kcel.colour decides (a terminal, --color, NO_COLOR, FORCE_COLOR)."""

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if colour.wanted(sys.stdout, sys.stderr) else text

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


_style = _Style()


def _check(args: argparse.Namespace) -> int:
    """CRD create checks with every expression's estimated cost; exit 1 when any CRD would be rejected."""
    from kcel import annotations
    from kcel.findings import Emitter, Finding
    from kcel.k8s import field
    from kcel.k8s.crds.crd import check_crd, count_rules
    from kcel.k8s.manifests.files import manifest_files
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_CRD_COST_LIMIT
    from kcel.k8s.surfaces.checking import check_files
    from kcel.k8s.surfaces.checking import report as checked_report

    reports: list[dict[str, Any]] = []
    emit = Emitter(args.output, "kcel check")
    crds, problems = _crds(args.crds)
    others = check_files(manifest_files(args.crds), args.k8s_version or NEWEST, report_unreadable=False)
    problems += others.problems
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    emit(Finding("error", problem, problem.partition(": ")[0]) for problem in problems)
    checks = []
    for crd in crds:
        check = check_crd(crd, k8s_version=args.k8s_version)
        checks.append((crd, check))
        rules = sum(count_rules(crd.schema_of(version)) for version in crd.versions)
        costs = [_cost_report(cost, args.explain_above) for cost in check.costs]
        totals = [
            {"schema": str(path), "cost": total, "share": _share(total, STATIC_ESTIMATED_CRD_COST_LIMIT)}
            for path, total in check.totals
        ]
        errors = [e.cause() for e in check.errors]
        report = {"crd": crd.name, "rules": rules, "valid": not check.errors, "errors": errors,
                  "warnings": check.warnings, "costs": costs, "totals": totals}  # fmt: skip
        reports.append(report)
        message = field.invalid_status_message(_CRD_KIND, crd.name, check.errors) if check.errors else ""
        if args.output == "text":
            _print_check(report, message, annotations.error_places(crd, check.errors))
        else:
            emit(annotations.crd_findings(crd, check.errors, report["warnings"]))
    for where, checked in others.checked:
        reports.append(checked_report(where, checked))
        if args.output == "text":
            _print_checked(where, checked)
        else:
            emit(annotations.checked_findings(where, checked))
    for skipped in others.skipped:
        print(f"skipped: {skipped}", file=sys.stderr)
    if args.output == "json":
        print(json.dumps(reports + [{"skipped": s} for s in others.skipped], indent=2))
    elif args.output == "junit":
        print(annotations.check_junit(checks, others), end="")
    emit.close()
    if not reports and not problems:
        print("kcel check: nothing to check: no CRD, admission policy or other object with CEL in the files given",
              file=sys.stderr)  # fmt: skip
        return 1 if args.strict else 0
    rules = sum(r["rules"] for r in reports[: len(crds)])
    summary = f"{_plural(len(crds), 'CRD')}, {_plural(rules, 'rule')}"
    if others.checked:
        summary += f", {_plural(len(others.checked), 'other object')}"
    skipped = f", {len(others.skipped)} skipped" if others.skipped else ""
    print(f"{summary}: {sum(not r['valid'] for r in reports)} rejected{skipped}", file=sys.stderr)
    return 0 if all(r["valid"] for r in reports) and not problems else 1


_CRD_KIND = "CustomResourceDefinition.apiextensions.k8s.io"


def _print_checked(where: str, checked: Any) -> None:
    verdict = "accepted" if checked.valid else "rejected"
    named = f"{checked.kind} {checked.name}" if checked.name else checked.kind
    print(f"{where}: {named}: {verdict} ({_plural(checked.expressions, 'expression')})")
    for error in checked.errors:
        print(f"  {error}")
    for warning in checked.warnings:
        print(f"  Warning: {warning}")


def _cost_report(cost: Any, explain_above: float) -> dict[str, Any]:
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_COST_LIMIT
    from kcel.k8s.rules.explain import explain

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


def _print_check(report: dict[str, Any], message: str, places: list[str]) -> None:
    verdict = "accepted" if report["valid"] else "rejected"
    print(f"{report['crd']}: {verdict} ({_plural(report['rules'], 'rule')})")
    if message:
        print(f"  {message}")
    for place in places:
        print(f"  at {place}")
    for warning in report["warnings"]:
        print(f"  Warning: {warning}")
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
    from kcel import annotations
    from kcel.findings import Emitter, Finding
    from kcel.k8s.crds.validate import Catalog, Options, validate_files_in_parallel
    from kcel.k8s.manifests.files import OldObjects, manifest_files

    try:
        catalog = Catalog.load(args.crd)
        files = manifest_files(args.files)
        old = OldObjects(_old_objects(args.old), args.namespace)
    except FileNotFoundError as err:
        raise _UsageError(str(err)) from None
    for problem in catalog.problems:
        print(f"error: {problem}", file=sys.stderr)
    skip_kinds = frozenset(k.strip() for kinds in args.skip_kind for k in kinds.split(",") if k.strip())
    options = Options(args.field_validation.capitalize(), args.namespace, args.subresource, args.k8s_version,
                      strict=args.strict, skip_kinds=skip_kinds)  # fmt: skip
    emit = Emitter(args.output, "kcel validate")
    emit(Finding("error", problem, problem.partition(": ")[0]) for problem in catalog.problems)
    reports: list[Report] = []
    with _Progress(len(files)) as progress:
        for found in validate_files_in_parallel(files, catalog, options, old, args.jobs):
            for report in found:
                reports.append(report)
                if args.output == "text":
                    progress.clear()
                    _print_report(report, args.verbose)
                else:
                    progress.clear()
                    emit(annotations.report_findings(report))
            progress.advance()
    if args.output == "json":
        print(json.dumps([r.as_json() for r in reports], indent=2))
    elif args.output == "junit":
        from kcel.findings import TestCase, junit_xml

        statuses = {"valid": "passed", "invalid": "failure", "error": "error", "skipped": "skipped"}
        cases = [TestCase(f"{r.where}: {r.kind} {r.name}".rstrip(": "), r.file, r.line, statuses[r.status], r.message)
                 for r in reports]  # fmt: skip
        print(junit_xml("kcel validate", cases), end="")
    emit.close()
    counts = {status: sum(r.status == status for r in reports) for status in ("valid", "invalid", "error", "skipped")}
    summary = f"{_plural(len(reports), 'object')} in {_plural(len(files), 'file')}"
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    print(f"{summary}: {counts['valid']} valid, {counts['invalid']} invalid, {counts['error']} not validated{skipped}",
          file=sys.stderr)  # fmt: skip
    return 1 if counts["invalid"] or counts["error"] or catalog.problems else 0


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _print_report(report: Report, verbose: bool) -> None:
    from kcel import annotations

    if report.status == "error":
        print(f"{report.where}: error: {report.message}", file=sys.stderr)
    elif report.status == "invalid":
        print(f"{report.where}: {report.message}")
        for place in annotations.field_places(report):
            print(f"  at {place}")
    elif verbose and report.status == "skipped":
        print(f"{report.where}: skipped: {report.message}")
    elif verbose:
        print(f"{report.where}: {report.kind} {json.dumps(report.name)} is valid")
    for warning in report.warnings:
        print(f"{report.where}: warning: {warning}")


def _old_objects(paths: list[str]) -> list[Any]:
    """The objects of the --old files (Lists expanded)."""
    from kcel.k8s.manifests.files import manifest_files

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
    from kcel.k8s.crds.crd import CRDLoadError, load_crds
    from kcel.k8s.manifests.files import manifest_files

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
    from kcel.k8s.crds.crd import CRDLoadError, load_documents

    try:
        return load_documents(Path(path))
    except CRDLoadError as err:
        raise _UsageError(str(err)) from None


def _variables(pairs: list[str], inputs: list[str]) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise _UsageError(f"--var takes NAME=JSON, got {pair!r}")
        try:
            variables[name] = json.loads(text)
        except json.JSONDecodeError as err:
            if text.lstrip()[:1] in ("[", "{", '"'):  # meant as JSON: say where it breaks, do not bind a string
                raise _UsageError(f"--var {name}: not valid JSON: {err.msg} at column {err.colno}: {text!r}") from None
            variables[name] = text  # a bare word is a string
    for spec in inputs:
        name, sep, path = spec.partition("=")
        if sep and name.isidentifier():
            variables[name] = _load(path)
            continue
        document = _load(spec)  # a mapping from variable names to values
        if not isinstance(document, dict) or not all(isinstance(k, str) and k.isidentifier() for k in document):
            raise _UsageError(f"{spec}: without NAME= the file must hold a mapping of variable names to values")
        variables.update(document)
    return variables


def _load(path: str) -> Any:
    """A variable's value from a file holding one JSON/YAML document."""
    if not Path(path).is_file():
        raise _UsageError(f"{path}: no such file")
    documents = _documents(path)
    if len(documents) != 1:
        raise _UsageError(f"{path} holds {len(documents)} documents; a variable takes exactly one")
    return documents[0]


if __name__ == "__main__":
    sys.exit(main())
