"""The `kcel` command: evaluate and parse CEL expressions, check CRDs and validate custom resources."""

from __future__ import annotations

import argparse
import codecs
import gc
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from kcel import colour, interrupts
from kcel.commands import UsageError, positive, read_documents

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


def build_parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The `kcel` command line (argparse; every subcommand's help ends with working examples).

    With `wanted`, only that command is declared: nothing else is shown when the arguments name it (see
    `wanted_command`), and declaring every command, and importing the modules that declare some, took 15 ms of
    every start."""
    parser = argparse.ArgumentParser(
        prog="kcel",
        description="CEL as the Kubernetes API server runs it: evaluate expressions, check CRDs, validate objects.",
        epilog="examples:\n  kcel eval '1 + 1'\n  kcel check examples/widget-crd.yaml\n"
        "  kcel validate --crd examples/widget-crd.yaml examples/widget.yaml\n  kcel test examples/\n  kcel repl\n\n"
        "Run 'kcel COMMAND --help' for a command's options and more examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show kcel's version and exit")
    _add_color_option(parser, "auto")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    table = _commands()
    if wanted not in table:  # a command of kcel.k8s.surfaces, or help for all
        table = _with_surface_commands(table)
    for name, (summary, epilog, configure) in table.items():
        if wanted not in table or wanted == name:
            configure(_command(commands, name, summary, epilog))
    return parser


Configure = Callable[[argparse.ArgumentParser], None]


def _with_surface_commands(table: dict[str, tuple[str, str, Configure]]) -> dict[str, tuple[str, str, Configure]]:
    """The commands of the other places Kubernetes runs CEL (kcel.k8s.surfaces.command), listed after `audit`."""
    from kcel.k8s.surfaces import command as surface_command

    names = list(table)
    after = names.index("audit") + 1
    surfaces = {name: (summary, "", configure) for name, (summary, configure) in surface_command.COMMANDS.items()}
    return {**{n: table[n] for n in names[:after]}, **surfaces, **{n: table[n] for n in names[after:]}}


def _commands() -> dict[str, tuple[str, str, Configure]]:
    """kcel's own commands, in the order `kcel --help` lists them: each one's summary, the end of its help, and what
    declares its options."""
    return {
        "eval": ("evaluate an expression", EVAL_EXAMPLES, _configure_eval),
        "parse": ("parse an expression and print it back (or its AST)",
                  "examples:\n  kcel parse 'a.all(x, x > 0)'\n  kcel parse --dump 'a.b + 1'\n", _configure_parse),
        "check": (
            "check CRDs, admission policies, webhook configurations, DRA device classes and claims, authentication "
            "and authorization configuration as the API server does on create (or load): CEL compiles, costs fit "
            "the limits",
            "In a kustomize tree (kustomization.yaml files among the files or in the folders above them) each patch "
            "is applied to its target as kustomize applies it and the patched object is checked, a finding shown "
            "where the patch or the base wrote it; a patch whose target is not in the tree is counted (not applied), "
            "never checked as an object.\n\n"
            "examples:\n  kcel check examples/widget-crd.yaml\n  kcel check examples/expensive-crd.yaml\n"
            "  kcel check -o json crds/\n  kcel check examples/\n\n"
            "Exit status: 0 accepted (or nothing to check, or lints only, unless --strict), 1 rejected or unreadable, "
            "2 bad usage.\n",
            _configure_check,
        ),
        "validate": (
            "validate custom resources as the API server would: decoding, pruning, defaulting, schema, CEL rules",
            "Each object is checked against the CRD its apiVersion and kind name, as a create request (an update "
            "when --old holds an object of the same kind, namespace and name).\n\nexamples:\n"
            "  kcel validate --crd examples/widget-crd.yaml examples/widget.yaml\n"
            "  kcel validate --crd crds/ --old before/ after/\n\n"
            "Exit status: 0 all valid, 1 any invalid or unreadable, 2 bad usage.\n",
            _configure_validate,
        ),
        "admit": ("decide as the API server's Mutating- and ValidatingAdmissionPolicies would, offline", "",
                  _configured_by("kcel.k8s.admission.command")),
        "audit": ("what new admission policies or CRDs would do to the objects a cluster stores, from a snapshot "
                  "(kubectl get -A -o yaml)", "", _configured_by("kcel.commands.audit")),
        "test": ("run suites of cases (CRDs, admission policies, webhook matchConditions, DRA selectors, "
                 "authentication and authorization configuration) as the API server would answer them", "",
                 _configured_by("kcel.suites.command")),
        "serve": (
            "run an admission webhook that enforces Validating- and MutatingAdmissionPolicies",
            "examples:\n  kcel serve --policy examples/admission/policies --cert tls.crt --key tls.key\n"
            "  kcel serve --policy policies/ --insecure-http --port 8080   # local testing only\n",
            _configured_by("kcel.webhook.command"),
        ),
        "repl": ("author policy expressions interactively (types, costs, explanations)",
                 "examples:\n  kcel repl\n  kcel repl --k8s-version 1.34\n\nType %help inside.\n", _configure_repl),
        "completion": ("print a shell completion script",
                       "examples:\n  source <(kcel completion bash)          # in ~/.bashrc\n"
                       "  kcel completion zsh > \"${fpath[1]}/_kcel\"\n"
                       "  kcel completion fish > ~/.config/fish/completions/kcel.fish\n", _configure_completion),
        "lsp": ("serve the Language Server Protocol for editors (pip install 'kcel[lsp]')",
                "examples:\n  kcel lsp                 # stdio, as editors start it\n"
                "  kcel lsp --tcp 127.0.0.1:2087   # for debugging\n", _configure_lsp),
    }  # fmt: skip


def _configured_by(module: str) -> Configure:
    """A command whose module declares its options (`configure`), imported only when that command runs."""

    def configure(command: argparse.ArgumentParser) -> None:
        importlib.import_module(module).configure(command)

    return configure


def wanted_command(argv: Sequence[str]) -> str | None:
    """The command an argument list names (its first word, after any `--color`), or None where the list may ask
    for the help of all commands (`kcel --help eval`, `kcel --he eval`)."""
    arguments = iter(argv)
    for argument in arguments:
        if argument == "--color":
            next(arguments, None)
        elif not argument.startswith("-"):
            return argument
        elif not argument.startswith("--color="):
            return None
    return None


def _configure_eval(command: argparse.ArgumentParser) -> None:
    from kcel.k8s.environment import add_version_option

    command.add_argument("expression")
    command.add_argument(
        "--var",
        "-v",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a variable's value as JSON (a bare word is a string)",
    )
    command.add_argument(
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
    command.add_argument(
        "--decl",
        "-d",
        action="append",
        default=[],
        metavar="NAME:TYPE",
        help="declare a variable's type (e.g. 'self:map(string, int)'); undeclared ones are dyn",
    )
    command.add_argument(
        "--messages", action="append", default=[], metavar="FILE",
        help="protobuf message types: a FileDescriptorSet (protoc --include_imports --descriptor_set_out=FILE, or "
        "its JSON); variables declared with a message type take their values in protobuf's JSON (kcel[protobuf])",
    )  # fmt: skip
    add_version_option(command)
    command.add_argument(
        "--env", metavar="NAME", choices=ENVIRONMENT_NAMES,
        help="the CEL environment of a place Kubernetes runs CEL, with its variables and libraries: "
        + ", ".join(ENVIRONMENT_NAMES),
    )  # fmt: skip
    command.add_argument("--cost", action="store_true", help="also print the runtime cost (cel-go's units)")
    command.add_argument(
        "--cost-limit",
        type=int,
        default=DEFAULT_COST_LIMIT,
        metavar="N",
        help=f"stop past this runtime cost (default {DEFAULT_COST_LIMIT:,}, the API server's)",
    )
    command.add_argument(
        "--explain",
        action="store_true",
        help="show the value of every subexpression and what decided &&, ||, ?: and macros",
    )
    command.add_argument("--show-python", action="store_true", help="print the generated Python function")
    command.add_argument("--output", "-o", choices=("text", "json"), default="text")


def _configure_parse(command: argparse.ArgumentParser) -> None:
    command.add_argument("expression")
    command.add_argument("--dump", action="store_true", help="print the AST with node ids")


def _configure_check(command: argparse.ArgumentParser) -> None:
    from kcel.k8s.admission.served import add_runtime_config_option
    from kcel.k8s.environment import add_version_option

    command.add_argument("crds", nargs="+", metavar="FILE|DIR")
    command.add_argument("--strict", action="store_true",
                         help="fail on what is only said by default: nothing in the files holds CEL to check (a "
                         "pre-commit hook given only samples), or a lint of a rule (a curled quote, a field name "
                         "older versions reject, a cost over the budget at some versions only)")  # fmt: skip
    command.add_argument("--output", "-o", choices=CI_OUTPUTS, default="text",
                         help="github: workflow commands, shown on the file and line by GitHub Actions; sarif: SARIF "
                         "2.1.0, for code scanning; junit: JUnit XML, a test case per CRD or object")  # fmt: skip
    add_version_option(command, several=True)
    add_runtime_config_option(command)
    command.add_argument(
        "--jobs", "-j", type=positive, default=os.cpu_count() or 1, metavar="N",
        help="worker processes for many files (default: one per CPU); the output keeps file order",
    )  # fmt: skip
    command.add_argument(
        "--explain-above", type=float, default=10.0, metavar="PERCENT",
        help="explain the cost of expressions above this share of the per-expression limit (default 10)",
    )  # fmt: skip


def _configure_validate(command: argparse.ArgumentParser) -> None:
    from kcel.k8s.environment import add_version_option

    command.add_argument("files", nargs="+", metavar="FILE|DIR", help="manifests (YAML/JSON; directories recursively)")
    command.add_argument("--crd", action="append", required=True, metavar="CRD|DIR", help="CRD files (repeatable)")
    command.add_argument("--old", action="append", default=[], metavar="FILE|DIR", help="objects before an update")
    command.add_argument("--subresource", choices=("status",), help="validate updates as status updates")
    command.add_argument(
        "--validate", dest="field_validation", choices=("strict", "warn", "ignore"), default="strict",
        help="unknown and duplicate fields: reject (kubectl's default), warn, or drop silently",
    )  # fmt: skip
    command.add_argument("--namespace", "-n", default="default", help="namespace of objects that name none")
    command.add_argument(
        "--jobs", "-j", type=positive, default=os.cpu_count() or 1, metavar="N",
        help="worker processes for many files (default: one per CPU); the output keeps file order",
    )  # fmt: skip
    command.add_argument("--skip-kind", action="append", default=[], metavar="KIND[,KIND]",
                         help="do not validate documents of these kinds (repeatable)")  # fmt: skip
    command.add_argument("--strict", action="store_true",
                         help="documents no CRD given types (kustomization files, RBAC, built-in kinds) are errors; "
                         "by default they are skipped and counted")  # fmt: skip
    command.add_argument("--verbose", "-v", action="store_true", help="also list the valid and skipped objects")
    command.add_argument("--output", "-o", choices=CI_OUTPUTS, default="text",
                         help="github: workflow commands, shown on the file and line by GitHub Actions; sarif: "
                         "SARIF 2.1.0, for code scanning; junit: JUnit XML, a test case per object")  # fmt: skip
    add_version_option(command, several=True)


def _configure_repl(command: argparse.ArgumentParser) -> None:
    from kcel.k8s.environment import add_version_option

    add_version_option(command)
    command.add_argument("--history", metavar="FILE", help="history file (default ~/.kcel_history)")
    command.add_argument("--messages", action="append", default=[], metavar="FILE",
                         help="protobuf message types from a FileDescriptorSet, as for kcel eval")  # fmt: skip


def _configure_completion(command: argparse.ArgumentParser) -> None:
    command.add_argument("shell", choices=("bash", "zsh", "fish"))


def _configure_lsp(command: argparse.ArgumentParser) -> None:
    command.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")


def _language_server(tcp: str | None) -> int:
    try:
        from kcel.lsp.server import main as serve_language
    except ImportError:
        print("kcel lsp needs pygls: pip install 'kcel[lsp]'", file=sys.stderr)
        return 2
    return serve_language(tcp)


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


class _Version(argparse.Action):
    """`--version`, which reads the installed package's metadata only when asked (that import costs every command)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(f"kcel {package_version()}")
        parser.exit()


def package_version() -> str:
    """kcel's installed version (`kcel --version`, the REPL's banner)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kcel")
    except PackageNotFoundError:
        return "(not installed)"


def console() -> NoReturn:
    """The installed `kcel` script: `main`, then an exit without the interpreter's last garbage collections.

    Everything the command made is frozen first (`gc.freeze`), so the collections the interpreter runs while it
    tears the modules down skip it: they found nothing to free and took 30 ms, a sixth of `kcel eval`'s time.
    Objects are still released, and files closed, as their modules go."""
    try:
        code = main()
    finally:  # argparse's --help, --version and usage errors exit from inside `main`
        gc.freeze()
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run one command. A reader that goes away (`kcel ... | head`) ends it quietly with 141, as SIGPIPE would
    end a C program; Ctrl-C with 130."""
    _printable_output()
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


def _printable(err: UnicodeError) -> tuple[str | bytes, int]:
    """What output the terminal's encoding cannot hold becomes: the bytes a file name had that were not UTF-8 (Python
    holds them as lone surrogates) as they were, any other character escaped (`\\xe9` under LC_ALL=C)."""
    assert isinstance(err, UnicodeEncodeError)
    chunk = err.object[err.start : err.end]
    if all("\udc80" <= ch <= "\udcff" for ch in chunk):
        return bytes(ord(ch) - 0xDC00 for ch in chunk), err.end
    return chunk.encode("ascii", "backslashreplace").decode("ascii"), err.end


def _printable_output() -> None:
    """stdout and stderr never fail on a character their encoding lacks (an ASCII locale, PYTHONIOENCODING=ascii, a
    file name that is not UTF-8): a UnicodeEncodeError there was a traceback instead of the answer."""
    codecs.register_error("kcel.printable", _printable)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            reconfigure(errors="kcel.printable")


def _discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for the closed pipe is dropped, not written at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (an embedding caller's): nothing to protect
        pass


def _run(argv: list[str] | None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments == ["--version"]:  # at once: the parser's declarations import the CEL environment
        print(f"kcel {package_version()}")
        return 0
    from kcel.errors import CelError, CompileError

    args = build_parser(wanted_command(arguments)).parse_args(arguments)
    interrupts.restore()  # the engine is imported: from now on Ctrl-C is a KeyboardInterrupt, which `main` catches
    colour.choose(args.color)
    try:
        if args.command == "parse":
            from kcel.parser import parse
            from kcel.parser.unparser import dump, unparse

            parsed = parse(args.expression)
            print(dump(parsed) if args.dump else unparse(parsed))
            return 0
        if args.command == "completion":
            from kcel.completion import script

            print(script(build_parser(), args.shell), end="")
            return 0
        if args.command == "check":
            from kcel.commands.check import run as check

            return check(args)
        if args.command == "validate":
            from kcel.commands.validate import run as validate

            return validate(args)
        if args.command == "audit":
            from kcel.commands.audit import run as audit

            return audit(args)
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
    except UsageError as err:
        print(f"kcel: {err}", file=sys.stderr)
        return 2


def _evaluate(args: argparse.Namespace) -> int:
    from kcel.env import Env
    from kcel.errors import CelError
    from kcel.eval.display import cel_text, json_value, result_type
    from kcel.k8s.environment import NEWEST

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
        raise UsageError(str(err)) from None
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
        raise UsageError(str(err)) from None
    try:
        return Messages([Path(path) for path in paths])
    except OSError as err:
        raise UsageError(f"--messages: {err.strerror}: {err.filename}") from None
    except Exception as err:  # not a descriptor set: protobuf's DecodeError, ParseError, TypeError...
        raise UsageError(f"--messages: not a FileDescriptorSet: {err}") from None


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
                raise UsageError(f"{name}: not a {type_name} in protobuf's JSON: {err}") from None
    return converted


def _declaration(text: str) -> tuple[str, str]:
    name, sep, type_text = text.partition(":")
    if not sep or not name.strip() or not type_text.strip():
        raise UsageError(f"--decl takes NAME:TYPE (e.g. 'self:list(string)'), got {text!r}")
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


def _variables(pairs: list[str], inputs: list[str]) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--var takes NAME=JSON, got {pair!r}")
        try:
            variables[name] = _json_variable(name, text)
        except json.JSONDecodeError as err:
            if text.lstrip()[:1] in ("[", "{", '"'):  # meant as JSON: say where it breaks, do not bind a string
                raise UsageError(f"--var {name}: not valid JSON: {err.msg} at column {err.colno}: {text!r}") from None
            variables[name] = text  # a bare word is a string
        except ValueError as err:  # a number past float64's range
            raise UsageError(f"--var {name}: {err}") from None
    for spec in inputs:
        name, sep, path = spec.partition("=")
        if sep and name.isidentifier():
            variables[name] = _load(path)
            continue
        document = _load(spec)  # a mapping from variable names to values
        if not isinstance(document, dict) or not all(isinstance(k, str) and k.isidentifier() for k in document):
            raise UsageError(f"{spec}: without NAME= the file must hold a mapping of variable names to values")
        variables.update(document)
    return variables


def _json_variable(name: str, text: str) -> Any:
    """A `--var` value, its numbers as the API server decodes them; one nested past kcel's limit on maps and lists
    (kcel.k8s.manifests.nesting, as for files) is refused where it passes it (Python's json would end in a
    RecursionError some thousands of levels down)."""
    from kcel.k8s.manifests.decoding import json_float, json_int
    from kcel.k8s.manifests.nesting import MAX_DEPTH, json_too_deep, too_deep_message

    if text.count("[") + text.count("{") > MAX_DEPTH:  # else it cannot nest past the limit: not worth reading
        found = json_too_deep(text)
        if found is not None:
            path, _, column = found
            raise UsageError(f"--var {name}: at column {column}: {too_deep_message(path)}")
    return json.loads(text, parse_int=json_int, parse_float=json_float)


def _load(path: str) -> Any:
    """A variable's value from a file holding one JSON/YAML document."""
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such file")
    documents = read_documents(path)
    if len(documents) != 1:
        raise UsageError(f"{path} holds {len(documents)} documents; a variable takes exactly one")
    return documents[0]


if __name__ == "__main__":
    sys.exit(main())
