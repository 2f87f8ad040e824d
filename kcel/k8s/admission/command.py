"""`kcel admit`: what the API server's admission policies would do to manifests, offline: the object the
MutatingAdmissionPolicies make of each (a diff, and the JSON patch), then the ValidatingAdmissionPolicies' decision.

Only argparse is imported at module level, so that building the `kcel` parser stays cheap.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel.k8s.admission.identity import AUTHENTICATED, DEFAULT_USER, authenticated_groups
from kcel.k8s.admission.served import add_runtime_config_option
from kcel.k8s.environment import add_version_option

if TYPE_CHECKING:
    from kcel.k8s.admission.decision import Decision
    from kcel.k8s.admission.policyset import PolicySet

EXAMPLE = (
    "example:\n"
    "  kcel admit --policy examples/admission/policies --params examples/admission/params \\\n"
    "      examples/admission/objects/deployment-too-many.yaml\n\n"
    "exit status: 0 allowed, 1 denied (or a policy or object could not be used), 2 usage error"
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `kcel admit`'s arguments to `parser`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLE
    parser.add_argument("objects", nargs="+", metavar="OBJECT.yaml", help="objects to admit (each document is one)")
    parser.add_argument("--policy", action="append", default=[], metavar="FILE|DIR", help="policies (and bindings)")
    parser.add_argument("--binding", action="append", default=[], metavar="FILE|DIR", help="policy bindings")
    parser.add_argument(
        "--params", action="append", default=[], metavar="FILE|DIR", help="param objects, Namespaces and CRDs"
    )
    # kcel serve's former spellings, read everywhere so that one command line moves between the commands.
    parser.add_argument("--policies", action="append", dest="policy", help=argparse.SUPPRESS)
    parser.add_argument("--resources", action="append", dest="params", help=argparse.SUPPRESS)
    parser.add_argument("--rbac", action="append", default=[], metavar="DIR", help="RBAC objects for `authorizer`")
    parser.add_argument(
        "--schema", action="append", default=[], metavar="FILE",
        help="OpenAPI v3 of built-in kinds for apply configurations (kubectl get --raw /openapi/v3/apis/apps/v1); "
        "not needed with pip install 'kcel[schemas]'",
    )  # fmt: skip
    add_request_options(parser)
    add_version_option(parser, several=True)
    add_runtime_config_option(parser)
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="show each policy, binding and param's outcome, and why those that did not apply did not",
    )
    parser.add_argument("--fail-on-unmatched", action="store_true",
                        help="exit 1 when no policy applied to an object (by default a warning)")  # fmt: skip
    parser.add_argument(
        "--output",
        "-o",
        choices=("text", "json", "github", "sarif", "junit"),
        default="text",
        help="github: workflow commands on each denied object's document, for GitHub Actions; sarif: SARIF 2.1.0, "
        "for code scanning; junit: JUnit XML, a test case per request",
    )


def add_user_options(parser: argparse.ArgumentParser) -> None:
    """`--user` and `--group`: who makes the requests, the same default in every command."""
    parser.add_argument(
        "--user",
        default=DEFAULT_USER,
        help=f"the requesting user's name (default {DEFAULT_USER}, the same in every command)",
    )
    parser.add_argument("--group", action="append", default=[],
                        help=f"the user's groups (repeatable; {AUTHENTICATED} is always added, as the API server adds "
                        "it for any authenticated user)")  # fmt: skip


def add_request_options(parser: argparse.ArgumentParser) -> None:
    """The options that make an admission request of an object: `kcel admit`'s and `kcel match-webhooks`'."""
    parser.add_argument("--old", metavar="OLD.yaml", help="the objects before the update")
    parser.add_argument("--operation", choices=("CREATE", "UPDATE", "DELETE", "CONNECT"), type=str.upper)
    add_user_options(parser)
    parser.add_argument(
        "--namespace", "-n", help="the namespace of namespaced objects (default: their own, else default)"
    )
    parser.add_argument("--subresource", default="", help="e.g. status, scale")


class UsageError(Exception):
    """Exit status 2."""


def run(args: argparse.Namespace) -> int:
    """Admit every object document; print the decisions; 0 allowed, 1 denied or unusable input, 2 usage error."""
    try:
        return _run(args)
    except UsageError as err:
        print(f"kcel admit: {err}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from kcel.k8s.admission.policyset import PolicySet
    from kcel.settings import requested_versions

    if not args.policy and not args.binding:
        raise UsageError("no policies given (use --policy FILE|DIR)")
    given = [*args.policy, *args.binding, *args.params, *args.rbac, *args.schema, *args.objects]
    exists([*given, *([args.old] if args.old else [])])
    try:
        versions = requested_versions(args.k8s_version)
        policies = PolicySet.load([*args.policy, *args.binding], resources=args.params, schemas=args.schema,
                                  k8s_version=versions[0] if versions else None,
                                  runtime_config=args.runtime_config)  # fmt: skip
    except ValueError as err:  # an unknown --k8s-version, a broken .kcel.yaml
        raise UsageError(str(err)) from None
    authorizer = rbac_authorizer(args.rbac)
    if len(versions) > 1:
        return _at_each(args, policies, authorizer, versions)
    records, problems = _admit_all(args, policies, authorizer, show=args.output == "text")
    problems = [*policies.problems, *problems]
    warnings = [*policies.warnings, *assumed_namespaces(records, policies)]
    for record in records:
        if not record["applied"]:
            warnings.append(f"{record['source']}: no policy applied to {_target(record)} (kcel admit -v says why)")
    if args.output == "json":
        print(json.dumps({"problems": problems, "warnings": warnings, "results": records}, indent=2))
    elif args.output in ("github", "sarif"):
        from kcel.annotations import admission_findings
        from kcel.findings import Emitter

        emit = Emitter(args.output, "kcel admit")
        emit(admission_findings(records, problems))
        emit.close()
    elif args.output == "junit":
        from kcel.annotations import admission_junit

        print(admission_junit(records, problems), end="")
    else:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    denied = any(not record["allowed"] for record in records)
    unmatched = args.fail_on_unmatched and any(not record["applied"] for record in records)
    return 1 if denied or problems or unmatched else 0


def _at_each(args: argparse.Namespace, policies: PolicySet, authorizer: Any, versions: tuple[str, ...]) -> int:
    """Every request decided at each version; what differs between them (`--k8s-version 1.30-1.37`)."""
    from kcel.k8s.admission.policyset import PolicySet
    from kcel.matrix import Matrix, Outcome, report

    answers, problems = {}, list(policies.problems)
    for version in versions:
        if version != versions[0]:
            policies = PolicySet.load([*args.policy, *args.binding], resources=args.params, schemas=args.schema,
                                      k8s_version=version, runtime_config=args.runtime_config)  # fmt: skip
        records, found = _admit_all(args, policies, authorizer, show=False)
        problems += [problem for problem in [*policies.problems, *found] if problem not in problems]
        answers[version] = [
            Outcome(f"{r['source']}: {_target(r)} {r['operation']}", _verdict(r), not r["allowed"],
                    "; ".join([r["message"], *(f"Warning: {w}" for w in r["warnings"])]).strip("; "),
                    r["source"].partition(": ")[0])
            for r in records
        ]  # fmt: skip
    return report(Matrix.of(answers), args.output, "kcel admit", "requests", "admission-denied", problems)


def exists(paths: list[str]) -> None:
    for path in paths:
        if path != "-" and not Path(path).exists():
            raise UsageError(f"{path}: no such file or directory")


def rbac_authorizer(paths: list[str]) -> Any:
    if not paths:
        return None
    from kcel.k8s.authorization.rbac import RBACAuthorizer
    from kcel.k8s.manifests.files import manifest_files

    texts = [path.read_text(encoding="utf-8") for path in manifest_files(paths)]
    try:
        return RBACAuthorizer.from_yaml(*texts)
    except (ValueError, TypeError) as err:
        raise UsageError(f"--rbac: {err}") from None


def documents(file: Path) -> tuple[list[tuple[str, Any]], list[str]]:
    """(where, object) for every object document of a file (`-`: standard input), Lists flattened; and the
    documents' problems."""
    from kcel.k8s.manifests.decoding import decode_documents

    found: list[tuple[str, Any]] = []
    problems = []
    path = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return [], [f"{path}: cannot read: {err}"]
    for document in decode_documents(text, path):
        where = f"{path}: document {document.index}"
        if document.error:
            problems.append(document.error)
        elif isinstance(document.value, dict) and isinstance(document.value.get("items"), list):
            found += [(f"{where}: items[{i}]", item) for i, item in enumerate(document.value["items"])]
        elif document.value is not None:
            found.append((where, document.value))
    return found, problems


def _admit_all(
    args: argparse.Namespace, policies: PolicySet, authorizer: Any, show: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    problems: list[str] = []
    records = []
    for where, obj, old in paired_objects(args, read_documents, problems):
        try:
            record = _admit(args, policies, authorizer, obj, old)
        except ValueError as err:  # a request the API server would not build (a namespace mismatch)
            problems.append(f"{where}: {err}")
            continue
        record["source"] = where
        records.append(record)
        if show:
            _print(record, args.verbose)
    return records, problems


def read_documents(paths: list[str], problems: list[str]) -> list[tuple[str, Any]]:
    """(where, document) of every file named and under every folder named (Lists flattened); a file that cannot
    be read or a document that does not decode is a problem, a path that does not exist a usage error."""
    from kcel.k8s.manifests.files import manifest_files

    try:
        files = manifest_files(paths)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    found: list[tuple[str, Any]] = []
    for path in files:
        objects, errors = documents(path)
        found += objects
        problems += errors
    return found


Reader = Callable[[list[str], list[str]], list[tuple[str, Any]]]
"""(paths, problems) -> (where, document) of each path's documents; what cannot be read goes into problems."""


def paired_objects(args: argparse.Namespace, read: Reader, problems: list[str]) -> Iterator[tuple[str, Any, Any]]:
    """(where, object, old object) for each object of `args.objects`, an update's old object found in `args.old`
    by kind, namespace and name; documents that are no Kubernetes object, or lack their old object, are problems."""
    from kcel.k8s.manifests.files import OldObjects

    old_objects = read([args.old], problems) if args.old else []
    olds = OldObjects([obj for _, obj in old_objects if isinstance(obj, dict)], args.namespace or "default")
    for where, obj in read(args.objects, problems):
        if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
            problems.append(f"{where}: not a Kubernetes object (apiVersion and kind are required)")
            continue
        old = olds.get(obj) if args.old else None
        if args.old and old is None and args.operation in (None, "UPDATE"):
            problems.append(f"{where}: no object with the same kind, namespace and name in {args.old}")
            continue
        yield where, obj, old


def request_for(args: argparse.Namespace, obj: Any, old: Any, crds: Any = ()) -> dict[str, Any]:
    """The AdmissionReview request the options describe (an authenticated user: `system:authenticated` added)."""
    from kcel.k8s.admission.request import request_from_objects

    return request_from_objects(
        obj, old, operation=args.operation, user=args.user, groups=authenticated_groups(args.group),
        namespace=args.namespace,
        subresource=args.subresource, crds=crds,
    )  # fmt: skip


def _admit(args: argparse.Namespace, policies: PolicySet, authorizer: Any, obj: Any, old: Any) -> dict[str, Any]:
    from kcel.k8s.admission.request import guessed_resource_warning

    request = request_for(args, obj, old, policies.resources.crds)
    decision = policies.admit(request, authorizer=authorizer)
    record = _record(request, decision)
    subject = obj if obj is not None else old
    guess = guessed_resource_warning(str(subject.get("apiVersion", "")), str(subject.get("kind", "")),
                                     policies.resources.crds)  # fmt: skip
    record["notes"] = [guess] if guess and not args.subresource else []
    return record


def assumed_namespaces(records: list[dict[str, Any]], policies: PolicySet) -> list[str]:
    """A warning for each namespace the requests are in that no Namespace object was given for: the API server's
    is there, with its labels, which namespaceSelectors and `namespaceObject` read; kcel's has only the one label
    every Namespace gets."""
    if not policies.policies and not policies.mutating_policies:
        return []
    named = dict.fromkeys(str(r["namespace"]) for r in records if r["namespace"])
    return [
        f"Namespace {name!r} is not among the objects given: assumed to exist with only the label "
        f"kubernetes.io/metadata.name={name} (give its Namespace object with --params for its other labels)"
        for name in named
        if policies.resources.given_namespace(name) is None
    ]


def _record(request: dict[str, Any], decision: Decision) -> dict[str, Any]:
    mutation = {"object": request.get("object"), "patched": decision.patched, "patch": list(decision.patch)}
    return mutation | {
        "kind": request["kind"]["kind"], "namespace": request["namespace"], "name": request["name"],
        "operation": request["operation"], "allowed": decision.allowed, "applied": decision.applied,
        "code": decision.code,
        "reason": decision.reason, "message": decision.message, "statusMessage": decision.status_message,
        "kubectl": decision.kubectl_text(), "warnings": list(decision.warnings),
        "auditAnnotations": dict(decision.audit_annotations), "cost": decision.cost,
        "evaluations": [
            {"policy": e.policy, "binding": e.binding, "param": e.param, "outcome": e.outcome, "detail": e.detail}
            for e in decision.evaluations
        ],
    }  # fmt: skip


def _verdict(record: dict[str, Any]) -> str:
    verdict = "allowed" if record["allowed"] else f"denied ({record['code']} {record['reason']})"
    return verdict + ("" if record["applied"] else " (no policy applied)")


def _target(record: dict[str, Any]) -> str:
    return f"{record['kind']} {record['namespace'] + '/' if record['namespace'] else ''}{record['name']}"


def _print(record: dict[str, Any], verbose: bool) -> None:
    target = _target(record)
    verdict = _verdict(record)
    print(f"{record['source']}: {target} {record['operation']}: {verdict}")
    for note in record["notes"]:
        print(f"  kcel: warning: {note}")
    if record["patched"] is not None:
        print(f"  mutated ({len(record['patch'])} patch operations):")
        print(_diff(record["object"], record["patched"]), end="")
    for warning in record["warnings"]:
        print(f"  Warning: {warning}")
    if not record["allowed"]:
        print(f"  {record['kubectl']}")
    for key, value in record["auditAnnotations"].items():
        print(f"  audit annotation {key}: {value}")
    if verbose:
        for e in record["evaluations"]:
            binding = f" / {e['binding']}" if e["binding"] else ""
            param = f" param {e['param']}" if e["param"] else ""
            detail = f" ({e['detail']})" if e["detail"] else ""
            print(f"  - {e['policy']}{binding}{param}: {e['outcome']}{detail}")
        print(f"  cost: {record['cost']}")


def _diff(before: Any, after: Any) -> str:
    """A unified diff of the object as YAML, indented under the record."""
    import difflib

    import yaml

    def lines(value: Any) -> list[str]:
        text: str = yaml.safe_dump(value, sort_keys=True, default_flow_style=False)
        return text.splitlines(keepends=True)

    diff = difflib.unified_diff(lines(before), lines(after), "object", "mutated", n=2)
    return "".join(f"    {line}" if line.endswith("\n") else f"    {line}\n" for line in diff)
