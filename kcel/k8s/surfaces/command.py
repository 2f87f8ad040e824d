"""`kcel match-webhooks`, `kcel select-devices`, `kcel authenticate` and `kcel authorize`: the other places
Kubernetes runs CEL, run offline on given inputs, with the answer the API server (or the scheduler) would reach and
why. Files are read as `kcel admit` reads them; every answer is also printed as JSON (`-o json`).

Only argparse (and json, sys) are imported at module level, so that building the `kcel` parser stays cheap.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kcel.k8s.admission.command import add_request_options
from kcel.k8s.environment import NEWEST, add_version_option

if TYPE_CHECKING:
    from datetime import datetime

    from kcel.k8s.surfaces.authorization import AuthorizationConfiguration
    from kcel.k8s.surfaces.dra import Selection
    from kcel.k8s.surfaces.webhooks import Dispatch, WebhookConfiguration

Record = dict[str, Any]

MATCH_WEBHOOKS_EXAMPLES = (
    "Mutating webhooks are listed first, then validating ones: the API server's order (configurations by\n"
    "name, then as listed). Mutations are not run: every webhook sees the object as given.\n\n"
    "examples:\n"
    "  kcel match-webhooks --config examples/surfaces/webhook-configuration.yaml \\\n"
    "      --config examples/surfaces/mutating-webhook-configuration.yaml examples/surfaces/team-deployment.yaml\n"
    "  kcel match-webhooks --config examples/surfaces/webhook-configuration.yaml \\\n"
    "      --config examples/surfaces/mutating-webhook-configuration.yaml \\\n"
    "      --namespaces examples/surfaces/namespaces.yaml --namespace legacy --group system:nodes \\\n"
    "      examples/surfaces/team-deployment.yaml\n\n"
    "exit status: 0 the webhooks are listed, 1 a matchCondition error rejects a request (failurePolicy Fail)\n"
    "or a configuration or object could not be used, 2 usage error"
)
SELECT_DEVICES_EXAMPLES = (
    "The scheduler's allocator runs the DeviceClass's selectors, then the request's, on every device; a CEL\n"
    "error stops the allocation of the whole claim. Nodes, counts, capacity and taints are not considered.\n\n"
    "examples:\n"
    "  kcel select-devices examples/surfaces/device-class.yaml examples/surfaces/resource-slice.yaml\n"
    "  kcel select-devices -o json --k8s-version 1.36 --feature-gate DRAListTypeAttributes=true \\\n"
    "      examples/surfaces/device-class.yaml examples/surfaces/resource-slice.yaml\n"
    "  kcel select-devices examples/surfaces/device-class.yaml   # exit status 1: no ResourceSlice, no device\n\n"
    "exit status: 0 a device for every request, 1 a request without devices, an allocation failure or\n"
    "unusable input, 2 usage error"
)
AUTHENTICATE_EXAMPLES = (
    "TOKEN is a JWT, whose payload is read WITHOUT verifying its signature (kcel has no keys), or the JSON\n"
    "text of its claims; or a file holding either (or the claims as YAML); - reads standard input.\n"
    "Without --now the token's exp and nbf are not checked.\n\n"
    "examples:\n"
    "  kcel authenticate --config examples/surfaces/authentication-configuration.yaml \\\n"
    "      examples/surfaces/token-claims.json\n"
    "  kcel authenticate --config examples/surfaces/authentication-configuration.yaml \\\n"
    "      --now 2026-01-01T02:00:00Z examples/surfaces/token-claims.json   # exit status 1: expired\n"
    "  kcel authenticate --config examples/surfaces/authentication-configuration.yaml \\\n"
    '      \'{"iss": "https://issuer.example.com", "aud": "kubernetes", "email": "jo@example.com"}\''
    "   # exit status 1\n\n"
    "exit status: 0 authenticated, 1 rejected or unusable configuration, 2 usage error"
)
AUTHORIZE_EXAMPLES = (
    "Members of system:masters are allowed first; then each authorizer in order. kcel cannot know what\n"
    "RBAC, Node, ABAC or a webhook answer: the chain is followed up to the first of them whose\n"
    "matchConditions let it be asked (`undecided`).\n\n"
    "examples:\n"
    "  kcel authorize --config examples/surfaces/authorization-configuration.yaml \\\n"
    "      examples/surfaces/subject-access-review.yaml\n"
    "  kcel authorize -o json --config examples/surfaces/authorization-configuration.yaml \\\n"
    "      examples/surfaces/subject-access-review.yaml\n\n"
    "exit status: 0 allowed or undecided, 1 denied, forbidden (no authorizer has an opinion) or unusable\n"
    "input, 2 usage error"
)


def _common(parser: argparse.ArgumentParser, name: str, epilog: str) -> None:
    """What every surface command has: its examples, --k8s-version, -o text|json, and the name `run` dispatches on."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = epilog
    parser.set_defaults(surface_command=name)
    add_version_option(parser)
    parser.add_argument(
        "--output",
        "-o",
        choices=("text", "json"),
        default="text",
        help="json: one document, {problems, skipped, results}",
    )


def configure_match_webhooks(parser: argparse.ArgumentParser) -> None:
    """`kcel match-webhooks`: the request options are `kcel admit`'s."""
    parser.add_argument("objects", nargs="+", metavar="OBJECT.yaml", help="objects to send (each document is one)")
    parser.add_argument(
        "--config", action="append", required=True, metavar="FILE|DIR",
        help="Validating/MutatingWebhookConfigurations (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--namespaces", action="append", default=[], metavar="FILE|DIR",
        help="Namespace objects for namespaceSelectors (one not given has only its kubernetes.io/metadata.name label)",
    )  # fmt: skip
    parser.add_argument("--rbac", action="append", default=[], metavar="DIR", help="RBAC objects for `authorizer`")
    add_request_options(parser)
    _common(parser, "match-webhooks", MATCH_WEBHOOKS_EXAMPLES)


def configure_select_devices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="FILE|DIR",
        help="DeviceClasses, ResourceSlices and ResourceClaims or ResourceClaimTemplates, in any order",
    )  # fmt: skip
    parser.add_argument(
        "--feature-gate", action="append", default=[], metavar="NAME=true|false",
        help="turn a DRA feature gate on or off (repeatable; default: the release's defaults)",
    )  # fmt: skip
    _common(parser, "select-devices", SELECT_DEVICES_EXAMPLES)


def configure_authenticate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("token", metavar="TOKEN|CLAIMS.json|-", help="a JWT or claims, a file holding them, or -")
    parser.add_argument("--config", required=True, metavar="AUTHN.yaml", help="an AuthenticationConfiguration file")
    parser.add_argument(
        "--now", type=_moment, metavar="RFC3339|UNIX",
        help="check the token's exp and nbf as at this moment (e.g. 2026-01-01T00:00:00Z or 1767225600)",
    )  # fmt: skip
    _common(parser, "authenticate", AUTHENTICATE_EXAMPLES)


def configure_authorize(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "reviews", nargs="+", metavar="REVIEW.yaml", help="SubjectAccessReviews (or their specs), each document one"
    )
    parser.add_argument("--config", required=True, metavar="AUTHZ.yaml", help="an AuthorizationConfiguration file")
    _common(parser, "authorize", AUTHORIZE_EXAMPLES)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "match-webhooks": (
        "tell which admission webhooks a request is sent to, and why the others are not",
        configure_match_webhooks,
    ),
    "select-devices": (
        "run DRA DeviceClass and ResourceClaim selectors on ResourceSlice devices as the scheduler does",
        configure_select_devices,
    ),
    "authenticate": (
        "map a token's claims to a user as a structured authentication configuration does",
        configure_authenticate,
    ),
    "authorize": (
        "follow SubjectAccessReviews through a structured authorization configuration's authorizers",
        configure_authorize,
    ),
}
"""name -> (summary, configure): what `kcel` registers."""


def run(args: argparse.Namespace) -> int:
    """Run the command `configure_*` set up: 0 success, 1 a negative answer or unusable input, 2 usage error."""
    from kcel.k8s.admission.command import UsageError

    name = args.surface_command
    try:
        return _RUNNERS[name](args)
    except UsageError as err:
        print(f"kcel {name}: {err}", file=sys.stderr)
        return 2


# -- reading and reporting -------------------------------------------------------------------------------------------


class _Report:
    """A run's results, problems (any: exit 1) and skipped documents, printed as `kcel admit` prints them: text
    results as they come, problems on stderr; or one JSON document."""

    def __init__(self, output: str) -> None:
        self.json = output == "json"
        self.problems: list[str] = []
        self.skipped: list[str] = []
        self.results: list[Record] = []

    def add(self, record: Record, show: Callable[[Record], None]) -> None:
        self.results.append(record)
        if not self.json:
            show(record)

    def finish(self, negative: Callable[[Record], bool]) -> int:
        problems = list(dict.fromkeys(self.problems))
        if self.json:
            print(json.dumps({"problems": problems, "skipped": self.skipped, "results": self.results}, indent=2))
        else:
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            for skipped in self.skipped:
                print(f"skipped: {skipped}", file=sys.stderr)
        return 1 if problems or any(negative(r) for r in self.results) else 0


def _objects(paths: list[str], report: _Report) -> list[tuple[str, Any]]:
    from kcel.k8s.admission.command import read_documents

    return read_documents(paths, report.problems)


def _configuration(path: str, report: _Report) -> tuple[str, dict[str, Any]] | None:
    """The one document of a configuration file (as kube-apiserver reads `--authentication-config` and
    `--authorization-config`), or None with the problem reported."""
    known = len(report.problems)
    documents = _objects([path], report)
    if len(documents) == 1 and isinstance(documents[0][1], dict):
        return documents[0]
    if len(documents) == 1:
        report.problems.append(f"{documents[0][0]}: the configuration is not an object")
    elif len(report.problems) == known:  # not a file that failed to decode
        report.problems.append(f"{path}: holds {len(documents)} documents; a configuration file holds one")
    return None


def _group_kind(document: Any) -> tuple[str, str]:
    if not isinstance(document, dict):
        return "", ""
    return str(document.get("apiVersion", "")).rpartition("/")[0], str(document.get("kind", ""))


def _what(document: Any) -> str:
    kind = _group_kind(document)[1]
    return f"{kind} ({document.get('apiVersion')})" if kind else "a document without a kind"


def _as_json(value: Any, *properties: str) -> Record:
    """A result dataclass as a dict, with the properties derived from it (`called`, `selected`...)."""
    import dataclasses

    return {**dataclasses.asdict(value), **{name: getattr(value, name) for name in properties}}


def _version(args: argparse.Namespace) -> str:
    return str(args.k8s_version or NEWEST)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


# -- kcel match-webhooks ---------------------------------------------------------------------------------------------


def _match_webhooks(args: argparse.Namespace) -> int:
    from kcel.k8s.admission.command import exists, paired_objects, rbac_authorizer, read_documents
    from kcel.k8s.surfaces import webhooks

    exists([*args.config, *args.namespaces, *args.rbac, *args.objects, *([args.old] if args.old else [])])
    report, version = _Report(args.output), _version(args)
    configurations: dict[str, list[WebhookConfiguration]] = {webhooks.MUTATING: [], webhooks.VALIDATING: []}
    for where, document in _objects(args.config, report):
        group, kind = _group_kind(document)
        if (group, kind) not in webhooks.KINDS:
            report.skipped.append(f"{where}: {_what(document)} is not a webhook configuration")
            continue
        try:
            configurations[kind].append(webhooks.load(document, version))
        except webhooks.ConfigurationError as err:
            report.problems += [f"{where}: {kind} {err.checked.name}: {error}" for error in err.checked.errors]
    if not any(configurations.values()):
        report.problems += [] if report.problems else [f"no webhook configuration in {', '.join(args.config)}"]
        return report.finish(lambda record: True)
    namespaces = []
    for where, document in _objects(args.namespaces, report):
        if _group_kind(document) == ("", "Namespace"):
            namespaces.append(document)
        else:
            report.skipped.append(f"{where}: {_what(document)} is not a Namespace")
    authorizer = rbac_authorizer(args.rbac)
    for where, obj, old in paired_objects(args, read_documents, report.problems):
        try:
            record = _dispatch(args, configurations, obj, old, namespaces, authorizer)
        except ValueError as err:  # a request admission cannot read
            report.problems.append(f"{where}: {err}")
            continue
        report.add({"source": where, **record}, lambda record: _print_dispatch(record, bool(args.namespaces)))
    return report.finish(lambda record: not record["allowed"])


def _dispatch(
    args: argparse.Namespace, configurations: dict[str, list[WebhookConfiguration]], obj: Any, old: Any,
    namespaces: list[Any], authorizer: Any,
) -> Record:  # fmt: skip
    """The mutating webhooks, then (unless a condition error rejected the request) the validating ones."""
    from kcel.k8s.admission.command import request_for
    from kcel.k8s.admission.request import guessed_resource_warning
    from kcel.k8s.surfaces import webhooks

    request = request_for(args, obj, old)
    dispatches: list[Dispatch] = []
    notes: list[str] = []
    for kind in (webhooks.MUTATING, webhooks.VALIDATING):
        if dispatches and not dispatches[-1].allowed:
            notes.append("validating webhooks are not reached: the request was rejected")
        elif configurations[kind]:
            dispatches.append(webhooks.dispatch(
                configurations[kind], request, k8s_version=_version(args), namespaces=namespaces,
                authorizer=authorizer,
            ))  # fmt: skip
    rejected = next((d for d in dispatches if not d.allowed), None)
    guess = guessed_resource_warning(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    return {
        "kind": request["kind"]["kind"], "namespace": request["namespace"], "name": request["name"],
        "operation": request["operation"], "allowed": rejected is None, "code": rejected.code if rejected else 200,
        "message": rejected.message if rejected else "", "called": [name for d in dispatches for name in d.called],
        "webhooks": [{"kind": d.kind, **_as_json(h)} for d in dispatches for h in d.hooks],
        "notes": ([guess] if guess and not args.subresource else []) + notes,
    }  # fmt: skip


_NOT_CALLED = {
    "exempt": "webhook configurations and admission policies are never sent to webhooks",
    "namespaceSelector": "the namespaceSelector does not match the namespace's labels",
    "objectSelector": "the objectSelector does not match the object's labels",
    "rules": "no rule matches the request",
    "matchCondition": "matchCondition {} is false",
    "matchConditionError": "a matchCondition failed and failurePolicy Ignore skips the webhook: {}",
    "rejected": "a matchCondition failed and failurePolicy Fail rejects the request: {}",
}


def _print_dispatch(record: Record, namespaces_given: bool) -> None:
    target = f"{record['kind']} {record['namespace'] + '/' if record['namespace'] else ''}{record['name']}"
    verdict = f"calls {len(record['called'])} of {_plural(len(record['webhooks']), 'webhook')}"
    if not record["allowed"]:
        verdict = f"rejected ({record['code']} Forbidden)"
    print(f"{record['source']}: {target} {record['operation']}: {verdict}")
    for hook in record["webhooks"]:
        kind = hook["kind"].removesuffix("WebhookConfiguration").lower()
        which = f"{kind} {hook['configuration']} / {hook['webhook']}"
        why = "called" if hook["matched"] else f"not called: {_NOT_CALLED[hook['reason']].format(hook['detail'])}"
        if hook["reason"] == "namespaceSelector" and not namespaces_given:
            why += " (without --namespaces, a namespace has only its kubernetes.io/metadata.name label)"
        print(f"  - {which}: {why}")
    if not record["allowed"]:
        print(f"  Error from server (Forbidden): {record['message']}")
    for note in record["notes"]:
        print(f"  note: {note}")


# -- kcel select-devices ---------------------------------------------------------------------------------------------

_DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


def _select_devices(args: argparse.Namespace) -> int:
    from kcel.k8s.admission.command import UsageError
    from kcel.k8s.surfaces import dra

    report, version, gates = _Report(args.output), _version(args), _gates(args.feature_gate)
    try:
        dra.selector_env(version, stored=True, feature_gates=gates)  # an unknown gate, a release without DRA
    except ValueError as err:
        raise UsageError(str(err)) from None
    found: dict[str, list[tuple[str, Any]]] = {"DeviceClass": [], "ResourceSlice": [], "claims": []}
    for where, document in _objects(args.files, report):
        group, kind = _group_kind(document)
        if group == dra.GROUP and kind in _DRA_KINDS:
            found[kind if kind in found else "claims"].append((where, document))
        else:
            report.skipped.append(f"{where}: {_what(document)} is not a DeviceClass, ResourceSlice or ResourceClaim")
    claims, slices = found["claims"], found["ResourceSlice"]
    if not claims and not report.problems:
        report.problems.append(f"no ResourceClaim or ResourceClaimTemplate in {', '.join(args.files)}")
    classes = [document for _, document in found["DeviceClass"]]
    for where, claim in claims:
        selection = dra.select_devices(claim, [s for _, s in slices], classes, version, feature_gates=gates)
        record = _selection(where, claim, selection, [w for w, _ in slices])
        report.problems += record["errors"]
        report.add(record, _print_selection)
    return report.finish(lambda record: not record["allocatable"])


def _gates(given: list[str]) -> dict[str, bool]:
    from kcel.k8s.admission.command import UsageError

    gates = {}
    for text in given:
        name, _, value = text.partition("=")
        if not name or value.lower() not in ("true", "false"):
            raise UsageError(f"--feature-gate takes NAME=true|false, got {text!r}")
        gates[name] = value.lower() == "true"
    return gates


def _selection(where: str, claim: Any, selection: Selection, slices: list[str]) -> Record:
    """A claim's requests and devices; a request is unsatisfied when none of its options selects a device."""
    import re

    options: dict[str, bool] = {}
    for request in selection.requests:
        name = request.request.partition("/")[0]  # `name/option` for a firstAvailable option
        options[name] = options.get(name, False) or bool(request.selected and not request.error)
    unsatisfied = [name for name, satisfied in options.items() if not satisfied]

    def located(error: str) -> str:  # `slices[i].spec...` named by the ResourceSlice's file and document
        return re.sub(r"^slices\[(\d+)\]\.", lambda m: f"{slices[int(m.group(1))]}: ", error)

    return {
        "source": where, "kind": _group_kind(claim)[1], "claim": selection.claim, "failure": selection.failure,
        "allocatable": not selection.failure and not unsatisfied, "unsatisfied": unsatisfied,
        "requests": [_as_json(r, "selected") for r in selection.requests],
        "errors": [located(e) for e in selection.errors],
    }  # fmt: skip


def _print_selection(record: Record) -> None:
    if record["failure"]:
        verdict = "allocation fails"
    elif record["unsatisfied"]:
        verdict = f"no device for request {', '.join(record['unsatisfied'])}"
    else:
        verdict = "a device for every request"
    print(f"{record['source']}: {record['kind']} {record['claim']}: {verdict}")
    for request in record["requests"]:
        name, _, option = request["request"].partition("/")
        label = f"request {name}, option {option}" if option else f"request {name}"
        if request["error"]:
            print(f"  {label}: error: {request['error']}")
            continue
        count = f"{len(request['selected'])} of {_plural(len(request['devices']), 'device')} selected"
        print(f"  {label} (class {request['device_class']}): {count}")
        for device in request["devices"]:
            outcome = "selected" if device["matches"] else "not selected"
            print(f"    - {device['device']}: {'error: ' + device['error'] if device['error'] else outcome}")
    if record["failure"]:
        print(f"  the scheduler stops allocating the claim: {record['failure']}")


# -- kcel authenticate -----------------------------------------------------------------------------------------------


def _moment(text: str) -> float | datetime:
    """--now: Unix seconds, or an RFC 3339 time (`Z` or an offset; none means UTC)."""
    from datetime import datetime, timezone

    for number in (int, float):
        try:
            seconds = number(text)
            datetime.fromtimestamp(seconds, timezone.utc)  # a moment Python can hold (not nan, inf, year 10000)
            return seconds
        except (ValueError, OverflowError, OSError):
            continue
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time or Unix seconds: {text!r}") from None


def _authenticate(args: argparse.Namespace) -> int:
    from kcel.k8s.admission.command import exists
    from kcel.k8s.surfaces import authentication

    exists([args.config])
    report = _Report(args.output)
    source, token = _token(args.token, report)
    found = _configuration(args.config, report)
    if found is not None:
        try:
            authenticators = authentication.load(found[1], _version(args))
        except authentication.ConfigurationError as err:
            report.problems += [f"{found[0]}: {error}" for error in err.errors]
        else:
            if token is not None:
                result = authenticators.authenticate(token, args.now)
                report.add({"source": source, **_as_json(result, "authenticated")}, _print_authentication)
    return report.finish(lambda record: not record["authenticated"])


_JWT = r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"


def _token(given: str, report: _Report) -> tuple[str, str | dict[str, Any] | None]:
    """(where, the token): the argument itself (a JWT or JSON claims), or what the file or stdin holds: a JWT, or
    the claims as JSON or YAML; None with the problem reported."""
    import re
    from pathlib import Path

    from kcel.k8s.admission.command import UsageError
    from kcel.k8s.manifests.decoding import DecodeError, decode_value

    if given != "-" and (given.lstrip().startswith("{") or re.fullmatch(_JWT, given.strip())):
        return "the token", given
    if given != "-" and not Path(given).is_file():
        raise UsageError(f"{given}: no such file (TOKEN is a JWT, its claims as JSON, a file holding them, or -)")
    where = "<stdin>" if given == "-" else given
    try:
        text = sys.stdin.read() if given == "-" else Path(given).read_text(encoding="utf-8")
        if re.fullmatch(_JWT, text.strip()):
            return where, text.strip()
        claims = decode_value(text, where)
    except (OSError, UnicodeDecodeError, DecodeError) as err:
        report.problems.append(f"{where}: cannot read: {err}")
        return where, None
    if not isinstance(claims, dict):
        report.problems.append(f"{where}: holds neither a JWT nor an object of claims")
        return where, None
    return where, claims


def _print_authentication(record: Record) -> None:
    user = record["user"]
    if user is None:
        print(f"{record['source']}: rejected: {record['error']}")
        return
    print(f"{record['source']}: authenticated by {record['issuer']}")
    print(f"  username: {user['username']}")
    print(f"  uid: {user['uid'] or '(none)'}")
    print(f"  groups: {', '.join(user['groups']) or '(none)'} (the API server adds system:authenticated)")
    for key, values in user["extra"].items():
        print(f"  extra {key}: {', '.join(values)}")


# -- kcel authorize --------------------------------------------------------------------------------------------------


def _authorize(args: argparse.Namespace) -> int:
    from kcel.k8s.admission.command import exists
    from kcel.k8s.surfaces import authorization, webhooks

    exists([args.config, *args.reviews])
    report, version = _Report(args.output), _version(args)
    found = _configuration(args.config, report)
    if found is not None:
        try:
            configuration = authorization.load(found[1], version)
        except webhooks.ConfigurationError as err:
            report.problems += [f"{found[0]}: {error}" for error in err.checked.errors]
        else:
            for where, review in _objects(args.reviews, report):
                _authorize_review(configuration, where, review, version, report)
    return report.finish(lambda record: record["decision"] in ("deny", "no-opinion"))


def _authorize_review(
    configuration: AuthorizationConfiguration, where: str, review: Any, version: str, report: _Report
) -> None:
    """One review's chain; a step's `condition` tells a false matchCondition (its `detail`) from an error."""
    from kcel.k8s.surfaces import authorization

    if _group_kind(review)[1] not in ("SubjectAccessReview", "") or not isinstance(review, dict):
        report.problems.append(f"{where}: {_what(review)} is not a SubjectAccessReview or its spec")
        return
    try:
        result = authorization.authorize(configuration, review, k8s_version=version)
        request = authorization.review_request(review, configuration.selectors)
    except ValueError as err:  # a field of the wrong JSON type
        report.problems.append(f"{where}: {err}")
        return
    conditions = {a.name: {text for text, _ in a.conditions} for a in configuration.authorizers}
    steps = [_as_json(step) | {"condition": step.detail in conditions.get(step.authorizer, ())}
             for step in result.steps]  # fmt: skip
    record = {"source": where, "request": _describe(request), **_as_json(result), "steps": steps}
    report.add(record, _print_authorization)


def _describe(request: Record) -> str:
    """`jane get deployments.apps web in default`, `jane get /healthz`: who asks for what."""
    user = request["user"] or "(no user)"
    attributes, other = request.get("resourceAttributes"), request.get("nonResourceAttributes")
    if attributes is not None:
        resource = ".".join(filter(None, (attributes["resource"], attributes["group"])))
        resource += f"/{attributes['subresource']}" if attributes["subresource"] else ""
        name = f" {attributes['name']}" if attributes["name"] else ""
        namespace = f" in {attributes['namespace']}" if attributes["namespace"] else ""
        return f"{user} {attributes['verb']} {resource}{name}{namespace}"
    if other is not None:
        return f"{user} {other['verb']} {other['path']}"
    return f"{user} (no resource or non-resource attributes)"


_DECISIONS = {
    "allow": "allowed", "deny": "denied", "no-opinion": "forbidden: no authorizer has an opinion",
    "undecided": "undecided: an authorizer kcel cannot answer for decides",
}  # fmt: skip


def _print_authorization(record: Record) -> None:
    print(f"{record['source']}: {record['request']}: {_DECISIONS[record['decision']]}")
    asked = False
    for step in record["steps"]:
        outcome, detail = step["outcome"], step["detail"]
        if outcome == "ask":
            text = "asked (its matchConditions hold)" if step["type"] == "Webhook" else "asked"
            text += " if those above have no opinion" if asked else ": kcel cannot know its answer"
            asked = True
        elif outcome == "skip":
            text = f"skipped: matchCondition {detail!r} is false" if step["condition"] else f"skipped: {detail}"
        else:
            text = {"allow": "allows", "deny": "denies", "no-opinion": "no opinion"}[outcome]
            text += f": {detail}" if detail else ""
        print(f"  - {step['authorizer']} ({step['type']}): {text}")
    if record["error"] and record["decision"] != "deny":
        print(f"  error: {record['error']}")


_RUNNERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "match-webhooks": _match_webhooks, "select-devices": _select_devices, "authenticate": _authenticate,
    "authorize": _authorize,
}  # fmt: skip
