"""Cases for the other places Kubernetes runs CEL: reading their expectations, answering each case through
`kcel.k8s.surfaces`, checking and recording the answer.

- `webhooks`: the case's request, built as an admission case's (`admission_cases.admission_request`), goes to the
  suite's MutatingWebhookConfigurations, then, unless a match condition's error rejected it, to its
  ValidatingWebhookConfigurations (`webhooks.dispatch`, once per kind): the webhooks called, in order, why each
  other one is not, and the 403 of a rejection. Namespaces (`namespaces:` or in the files) answer namespace
  selectors, `rbac:` the `authorizer`.
- `devices`: `dra.select_devices` runs the claim's selectors, after those of the DeviceClass each request names,
  on every device of the suite's ResourceSlices, as the scheduler does. The claim and the classes must be ones
  that API server accepts on create (`dra.check`, with the case's feature gates), or the case is an error.
- `authentication`: `authentication.load(configuration, version).authenticate(token, now)`.
- `authorization`: `authorization.authorize(configuration, review, k8s_version=version)`.

Configurations are loaded once per Kubernetes version the suite runs at. One that no Kubernetes version would load
stops the suite (SuiteError naming its field); one that only these versions refuse makes their cases errors saying
why (`apiserver.config.k8s.io/v1` of AuthenticationConfiguration is read from 1.34 on), as a surface that does not
exist at a version does (device selectors before 1.31).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kcel.k8s import field as fe
from kcel.k8s.admission.dispatch import Resources
from kcel.k8s.authorization.rbac import RBACAuthorizer
from kcel.k8s.environment import LATEST, OLDEST
from kcel.k8s.manifests.decoding import decode_documents
from kcel.k8s.manifests.files import manifest_files
from kcel.k8s.surfaces import authentication, authorization, dra, webhooks
from kcel.k8s.surfaces.authentication import Authentication, Authenticators, UserInfo
from kcel.k8s.surfaces.authorization import Authorization, AuthorizationConfiguration
from kcel.suites.admission_cases import admission_request, rbac_authorizer
from kcel.suites.compare import check_map, quote
from kcel.suites.fields import Fields, SuiteError, Where, did_you_mean, kind_of
from kcel.suites.model import (
    AUTHENTICATION,
    AUTHORIZATION,
    DEVICES,
    WEBHOOKS,
    AuthenticationExpect,
    AuthorizationExpect,
    Case,
    ClaimInput,
    DeviceExpect,
    Expect,
    Mismatch,
    ReviewInput,
    Suite,
    TokenInput,
    UserExpect,
    WebhookExpect,
)

T = TypeVar("T")
G = TypeVar("G", ClaimInput, TokenInput, ReviewInput)
Source = tuple[str, Mapping[str, Any]]  # where an object is (`file: document 0`), and the object

DECISIONS = ("allow", "deny", "no-opinion", "undecided")
OUTCOMES = ("allow", "deny", "no-opinion", "skip", "ask")  # authorization.Step.outcome
USER_KEYS = ("username", "uid", "groups", "extra")
WEBHOOK_SUPPORT = (("", "Namespace"), ("apiextensions.k8s.io", "CustomResourceDefinition"))
DEVICE_KINDS = ("DeviceClass", "ResourceSlice")


# -- reading expectations -------------------------------------------------------------------------------------------


def _expect_fields(value: Any, where: Where, path: fe.Path, keys: tuple[str, ...]) -> Fields:
    """The expectation's mapping, with only `keys` and at least one of them."""
    if not isinstance(value, Mapping):
        raise SuiteError(where, path, f"must be a mapping of {', '.join(keys)}, not {kind_of(value)}")
    fields = Fields(value, where, path)
    fields.known(keys)
    if not any(fields.has(key) for key in keys):
        raise SuiteError(where, path, f"say what must come back: {', '.join(keys[:-1])} or {keys[-1]}")
    return fields


def _text(fields: Fields, key: str) -> str | None:
    """A text the answer must contain (never empty: that would match anything)."""
    text = fields.string(key)
    if text is not None and not text:
        raise fields.error(key, "give a text the message contains")
    return text


def read_webhook_expect(value: Any, where: Where, path: fe.Path) -> WebhookExpect:
    """`called` (webhook names in order, [] for none), `rejected` (a text of the 403), `skipped` (name -> a text
    of why it is not called: namespaceSelector, objectSelector, rules, matchCondition: NAME, exempt...)."""
    fields = _expect_fields(value, where, path, ("called", "rejected", "skipped"))
    if fields.has("called") and fields.value("called") is None:
        raise fields.error("called", "give the webhooks called ([]: none)")
    return WebhookExpect(fields.strings("called"), _text(fields, "rejected"), fields.string_map("skipped"))


def read_device_expect(value: Any, where: Where, path: fe.Path) -> DeviceExpect:
    """`selected` (request -> the devices it may have, `driver/pool/device`) and `failure` (a text of it)."""
    fields = _expect_fields(value, where, path, ("selected", "failure"))
    requests = fields.mapping("selected")
    selected: dict[str, tuple[str, ...]] | None = None
    if requests is not None:
        selected = {}
        for name in requests.data:
            devices = requests.strings(str(name))
            if devices is None:
                raise requests.error(str(name), "give the devices the request may have ([]: none)")
            selected[str(name)] = devices
    return DeviceExpect(selected, _text(fields, "failure"))


def read_authentication_expect(value: Any, where: Where, path: fe.Path) -> AuthenticationExpect:
    """`user` (username, uid, groups, extra: the ones given must be exactly so) or `rejected` (a text of why)."""
    fields = _expect_fields(value, where, path, ("user", "rejected"))
    if fields.has("user") and fields.has("rejected"):
        raise fields.error("rejected", "a token authenticates a user or is rejected, not both")
    user = fields.mapping("user")
    if user is None:
        if fields.has("user"):
            raise fields.error("user", "give the user's username (and uid, groups, extra)")
        return AuthenticationExpect(rejected=_text(fields, "rejected"))
    user.known(USER_KEYS)
    extra = user.mapping("extra")
    values = {str(key): extra.strings(str(key)) or () for key in extra.data} if extra is not None else None
    expected = UserExpect(user.string("username"), user.string("uid"), user.strings("groups"), values)
    return AuthenticationExpect(user=expected)


def read_authorization_expect(value: Any, where: Where, path: fe.Path) -> AuthorizationExpect:
    """`decision`, `authorizers` (name -> outcome, or the names asked in order) and `error` (a text of it)."""
    fields = _expect_fields(value, where, path, ("decision", "authorizers", "error"))
    authorizers: Mapping[str, str] | tuple[str, ...] | None = None
    if isinstance(fields.value("authorizers"), Mapping):
        outcomes = fields.string_map("authorizers") or {}
        for name, outcome in outcomes.items():
            if outcome not in OUTCOMES:
                problem = f"must be one of {', '.join(OUTCOMES)}, not {outcome!r}{did_you_mean(outcome, OUTCOMES)}"
                raise SuiteError(where, fields.at("authorizers").key(name), problem)
        authorizers = outcomes
    elif fields.has("authorizers"):
        authorizers = fields.strings("authorizers")
    decision = fields.string("decision", choices=DECISIONS)
    return AuthorizationExpect(decision, authorizers, _text(fields, "error"))


EXPECT_READERS: dict[str, Callable[[Any, Where, fe.Path], Expect]] = {
    WEBHOOKS: read_webhook_expect, DEVICES: read_device_expect, AUTHENTICATION: read_authentication_expect,
    AUTHORIZATION: read_authorization_expect,
}  # fmt: skip


# -- checking -------------------------------------------------------------------------------------------------------


def _check_text(field: str, expected: str | None, actual: str, absent: str) -> list[Mismatch]:
    """A rejection, failure or error: the expected text must be part of it; expecting none (None), there must be
    none (`absent` says so: "not rejected")."""
    if expected is None:
        return [Mismatch(field, absent, actual)] if actual else []
    if not actual:
        return [Mismatch(field, f"a message containing {quote(expected)}", absent)]
    return [] if expected in actual else [Mismatch(field, f"a message containing {quote(expected)}", actual)]


def one_line(text: str) -> str:
    """A message without the CEL source excerpts (` | 1 +`, ` | ..^`) of compile errors: suite problems and errors
    are one line each, as admission policies' are."""
    return " ".join(line.strip() for line in text.splitlines() if not line.startswith(" | "))


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def _given(case: Case, kind: type[G]) -> G:
    if not isinstance(case.given, kind):
        raise ValueError(f"{case.path}: this case gives no {kind.__name__}")
    return case.given


# -- loading what a suite names, per version ------------------------------------------------------------------------


@dataclass(frozen=True)
class PerVersion(Generic[T]):
    """What a suite's configuration loads as at each Kubernetes version, or why it does not load there."""

    what: str
    loaded: Mapping[str, T]
    problems: Mapping[str, str]

    def at(self, version: str) -> T:
        if version in self.problems:
            raise ValueError(f"{self.what} does not load at Kubernetes {version}: {self.problems[version]}")
        return self.loaded[version]


def _per_version(
    suite: Suite, key: str, what: str, versions: tuple[str, ...], load: Callable[[str], T]
) -> PerVersion[T]:
    """`load` at each version. What no Kubernetes version would load is broken: SuiteError naming `key`; what some
    other version would load is only new (or gone), and the cases at these versions are errors saying why."""
    loaded: dict[str, T] = {}
    problems: dict[str, str] = {}
    for version in versions:
        try:
            loaded[version] = load(version)
        except ValueError as err:
            problems[version] = one_line(str(err))
    if problems and not loaded and not any(_loads(load, version) for version in _other_versions(versions)):
        raise SuiteError(suite.where, fe.Path.new(key), next(iter(problems.values())))
    return PerVersion(what, loaded, problems)


def _other_versions(versions: tuple[str, ...]) -> list[str]:
    """The supported versions not in `versions`, newest first."""
    every = (f"{LATEST[0]}.{minor}" for minor in range(LATEST[1], OLDEST[1] - 1, -1))
    return [version for version in every if version not in versions]


def _loads(load: Callable[[str], Any], version: str) -> bool:
    try:
        load(version)
    except ValueError:
        return False
    return True


def _objects(suite: Suite, key: str) -> list[Source]:
    """Every object of the suite's files (a List's items one by one), each with where it is."""

    def fail(problem: str) -> SuiteError:
        return SuiteError(suite.where, fe.Path.new(key), problem)

    try:
        files = manifest_files(suite.files)
    except FileNotFoundError as err:
        raise fail(str(err)) from None
    found: list[tuple[str, Any]] = []
    for path in files:
        try:
            documents = decode_documents(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError) as err:
            raise fail(f"{path}: cannot read: {err}") from None
        for document in documents:
            if document.error:
                raise fail(document.error)
            where, value = f"{path}: document {document.index}", document.value
            if _is_list(value):
                found += [(f"{where}: items[{i}]", item) for i, item in enumerate(value["items"])]
            else:
                found.append((where, value))
    for where, value in found:
        if not isinstance(value, Mapping):
            raise fail(f"{where}: not a Kubernetes object ({kind_of(value)})")
    return found


def _is_list(value: Any) -> bool:
    """A `kind: List` (or `DeviceClassList`...) whose items are the objects."""
    return (
        isinstance(value, Mapping) and str(value.get("kind", "")).endswith("List")
        and isinstance(value.get("items"), list)
    )  # fmt: skip


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("name", "")) if isinstance(metadata, Mapping) else ""


def _foreign(suite: Suite, key: str, where: str, obj: Mapping[str, Any], holds: str) -> SuiteError:
    kind = f"{obj.get('kind') or 'an object without a kind'} ({obj.get('apiVersion')})"
    return SuiteError(suite.where, fe.Path.new(key), f"{where}: {kind} does not belong here: {key} files hold {holds}")


# -- webhooks -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookAnswer:
    """What the webhooks of both kinds make of a request: those called, in order (mutating first), why each other
    one is not (`reason: detail`), and the 403 message of a rejection ("" if none)."""

    called: tuple[str, ...]
    skipped: Mapping[str, str]
    rejected: str


Configurations = tuple[tuple[webhooks.WebhookConfiguration, ...], tuple[webhooks.WebhookConfiguration, ...]]


@dataclass(frozen=True)
class WebhookTarget:
    """A webhooks suite made ready: its configurations loaded at each version (mutating, validating), the
    Namespaces and CRDs the request needs, and its authorizer."""

    configurations: PerVersion[Configurations]
    namespaces: tuple[Mapping[str, Any], ...]
    crds: tuple[Any, ...]
    authorizer: RBACAuthorizer | None

    def answer(self, case: Case, version: str) -> WebhookAnswer:
        """Dispatch the case's request to the mutating webhooks, then the validating ones (raises ValueError on a
        request that cannot be built)."""
        request = admission_request(case, self.crds)
        dispatched: list[webhooks.Dispatch] = []
        for configurations in self.configurations.at(version):
            if configurations and all(d.allowed for d in dispatched):
                dispatched.append(webhooks.dispatch(
                    configurations, request, k8s_version=version, namespaces=self.namespaces, authorizer=self.authorizer
                ))  # fmt: skip
        skipped = {
            hook.webhook: f"{hook.reason}: {hook.detail}" if hook.detail else hook.reason
            for d in dispatched for hook in d.hooks if not hook.matched and hook.reason != "rejected"
        }  # fmt: skip
        rejected = next((d.message for d in dispatched if not d.allowed), "")
        return WebhookAnswer(tuple(name for d in dispatched for name in d.called), skipped, rejected)

    def check(self, expect: WebhookExpect, answer: WebhookAnswer) -> list[Mismatch]:
        mismatches = _check_text("rejected", expect.rejected, answer.rejected, "not rejected")
        if expect.called is not None and tuple(expect.called) != answer.called:
            mismatches.append(Mismatch("called", _names(expect.called), _names(answer.called)))
        if expect.skipped is None:
            return mismatches
        got = "\n".join(f"{name}: {why}" for name, why in answer.skipped.items()) or "none skipped"
        if not expect.skipped and answer.skipped:
            mismatches.append(Mismatch("skipped", "none skipped", got))
        mismatches += [
            Mismatch(f"skipped[{name}]", f"not called: {quote(why)}", got)
            for name, why in expect.skipped.items()
            if name not in answer.skipped or why not in answer.skipped[name]
        ]
        return mismatches

    def record(self, case: Case, answer: WebhookAnswer) -> Any:
        """The expectation this answer meets exactly, as it is written in a suite (`--update`)."""
        recorded: dict[str, Any] = {"called": list(answer.called)}
        if answer.rejected:
            recorded["rejected"] = answer.rejected
        if answer.skipped:
            recorded["skipped"] = dict(answer.skipped)
        return recorded


def prepare_webhooks(suite: Suite, versions: tuple[str, ...]) -> WebhookTarget:
    """The configurations of the suite's files, loaded at each version; Namespaces and CRDs beside them."""
    configurations: list[Source] = []
    support: list[Mapping[str, Any]] = list(suite.objects)
    for where, obj in _objects(suite, "webhooks"):
        group_kind = _group_kind(obj)
        if group_kind in webhooks.KINDS:
            configurations.append((where, obj))
        elif group_kind in WEBHOOK_SUPPORT:
            support.append(obj)
        else:
            holds = "Validating/MutatingWebhookConfigurations, and the Namespaces and CRDs their requests need"
            raise _foreign(suite, "webhooks", where, obj, holds)
    if not configurations:
        message = "no ValidatingWebhookConfiguration or MutatingWebhookConfiguration in these files"
        raise SuiteError(suite.where, fe.Path.new("webhooks"), message)

    def load(version: str) -> Configurations:
        loaded = []
        for where, document in configurations:
            try:
                loaded.append(webhooks.load(document, version))
            except ValueError as err:
                raise ValueError(f"{where}: {_name(document)}: {err}") from None
        by_kind = tuple(tuple(c for c in loaded if c.kind == kind) for kind in (webhooks.MUTATING, webhooks.VALIDATING))
        return by_kind[0], by_kind[1]

    loaded = _per_version(suite, "webhooks", "the webhook configurations", versions, load)
    namespaces = tuple(obj for obj in support if _group_kind(obj) == ("", "Namespace"))
    return WebhookTarget(loaded, namespaces, Resources(tuple(support)).crds, rbac_authorizer(suite))


# -- DRA device selectors -------------------------------------------------------------------------------------------

_SLICE = re.compile(r"slices\[(\d+)\]\.")


@dataclass(frozen=True)
class DeviceTarget:
    """A devices suite made ready: its DeviceClasses and ResourceSlices, each with where it is."""

    classes: tuple[Source, ...]
    slices: tuple[Source, ...]
    runtime_config: tuple[str, ...] = ()  # the suite's runtimeConfig: alpha and beta resource.k8s.io versions

    def answer(self, case: Case, version: str) -> dra.Selection:
        """The devices each request may have; raises ValueError when that version has no device selectors, or its
        API server would refuse the claim, a class or a slice."""
        given = _given(case, ClaimInput)
        gates = given.feature_gates
        dra.selector_env(version, stored=True, feature_gates=gates)  # Kubernetes before 1.31 has none
        claim = given.claim
        for where, document in (*self.classes, (str(claim.path), claim.value)):
            checked = dra.check(document, where, version, feature_gates=gates, runtime_config=self.runtime_config)
            if checked.errors:
                what = f"the {checked.kind or 'object'} {_name(document)} ({where})"
                raise ValueError(f"Kubernetes {version} would refuse {what}: {one_line('; '.join(checked.errors))}")
        selection = dra.select_devices(claim.value, [s for _, s in self.slices], [c for _, c in self.classes],
                                       version, feature_gates=gates)  # fmt: skip
        if selection.errors:
            problems = [_SLICE.sub(lambda m: f"{self.slices[int(m[1])][0]}: ", e, count=1) for e in selection.errors]
            raise ValueError(f"Kubernetes {version} would refuse these ResourceSlices: {'; '.join(problems)}")
        return selection

    def check(self, expect: DeviceExpect, selection: dra.Selection) -> list[Mismatch]:
        mismatches = _check_text("failure", expect.failure, selection.failure, "no failure")
        actual = {request.request: request.selected for request in selection.requests}
        for name, devices in (expect.selected or {}).items():
            if name not in actual:
                got = f"the claim has no request {name} (it has: {_names(list(actual))})"
                mismatches.append(Mismatch(f"selected[{name}]", _names(devices), got))
            elif sorted(devices) != sorted(actual[name]):
                mismatches.append(Mismatch(f"selected[{name}]", _names(devices), _names(actual[name])))
        return mismatches

    def record(self, case: Case, selection: dra.Selection) -> Any:
        """The expectation this selection meets exactly, as it is written in a suite (`--update`)."""
        recorded: dict[str, Any] = {"selected": {r.request: list(r.selected) for r in selection.requests}}
        if selection.failure:
            recorded["failure"] = selection.failure
        return recorded


def prepare_devices(suite: Suite, versions: tuple[str, ...]) -> DeviceTarget:
    """The DeviceClasses and ResourceSlices of the suite's files (the claims in them are the cases' to name)."""
    found: dict[str, list[Source]] = {kind: [] for kind in DEVICE_KINDS}
    for where, obj in _objects(suite, "devices"):
        group, kind = _group_kind(obj)
        if group == dra.GROUP and kind in DEVICE_KINDS:
            found[kind].append((where, obj))
        elif (group, kind) not in dra.KINDS:  # a ResourceClaim or ResourceClaimTemplate: a case names its file
            raise _foreign(suite, "devices", where, obj, "DeviceClasses and ResourceSlices")
    if not found["ResourceSlice"]:
        raise SuiteError(suite.where, fe.Path.new("devices"), "no ResourceSlice in these files: no device to select")
    return DeviceTarget(tuple(found["DeviceClass"]), tuple(found["ResourceSlice"]), suite.runtime_config)


# -- structured authentication --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuthenticationTarget:
    """An authentication suite made ready: its configuration's JWT authenticators, compiled at each version."""

    authenticators: PerVersion[Authenticators]

    def answer(self, case: Case, version: str) -> Authentication:
        given = _given(case, TokenInput)
        return self.authenticators.at(version).authenticate(given.token, given.now)

    def check(self, expect: AuthenticationExpect, result: Authentication) -> list[Mismatch]:
        user, wanted = result.user, expect.user
        if wanted is None:
            absent = f"authenticated as {_describe(user)}" if user is not None else "not rejected"
            return _check_text("rejected", expect.rejected, result.error, absent)
        if user is None:
            return [Mismatch("user", "an authenticated user", f"rejected: {result.error}")]
        mismatches = [
            Mismatch(f"user.{key}", quote(want), quote(got))
            for key, want, got in (("username", wanted.username, user.username), ("uid", wanted.uid, user.uid))
            if want is not None and want != got
        ]
        if wanted.groups is not None and tuple(wanted.groups) != user.groups:
            mismatches.append(Mismatch("user.groups", json.dumps(list(wanted.groups)), json.dumps(list(user.groups))))
        if wanted.extra is not None and _extra(wanted.extra) != _extra(user.extra):
            expected, actual = (json.dumps(_extra(extra)) for extra in (wanted.extra, user.extra))
            mismatches.append(Mismatch("user.extra", expected, actual))
        return mismatches

    def record(self, case: Case, result: Authentication) -> Any:
        """The expectation this outcome meets exactly, as it is written in a suite (`--update`)."""
        if result.user is None:
            return {"rejected": result.error}
        user: dict[str, Any] = {"username": result.user.username}
        if result.user.uid:
            user["uid"] = result.user.uid
        if result.user.groups:
            user["groups"] = list(result.user.groups)
        if result.user.extra:
            user["extra"] = _extra(result.user.extra)
        return {"user": user}


def _describe(user: UserInfo) -> str:
    groups = f" (groups {', '.join(user.groups)})" if user.groups else ""
    return f"{quote(user.username)}{groups}"


def _extra(extra: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    return {key: list(values) for key, values in sorted(extra.items())}


def prepare_authentication(suite: Suite, versions: tuple[str, ...]) -> AuthenticationTarget:
    assert suite.configuration is not None
    document = suite.configuration.value
    loaded = _per_version(suite, AUTHENTICATION, "the AuthenticationConfiguration", versions,
                          lambda version: authentication.load(document, version))  # fmt: skip
    return AuthenticationTarget(loaded)


# -- structured authorization ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuthorizationTarget:
    """An authorization suite made ready: its configuration's authorizers, compiled at each version."""

    configurations: PerVersion[AuthorizationConfiguration]

    def answer(self, case: Case, version: str) -> Authorization:
        review = _given(case, ReviewInput).review
        return authorization.authorize(self.configurations.at(version), review, k8s_version=version)

    def check(self, expect: AuthorizationExpect, result: Authorization) -> list[Mismatch]:
        mismatches = []
        if expect.decision is not None and expect.decision != result.decision:
            mismatches.append(Mismatch("decision", expect.decision, result.decision))
        outcomes = {step.authorizer: step.outcome for step in result.steps}
        if isinstance(expect.authorizers, tuple) and expect.authorizers != tuple(outcomes):
            mismatches.append(Mismatch("authorizers", _names(expect.authorizers), _names(list(outcomes))))
        elif isinstance(expect.authorizers, Mapping):
            mismatches += check_map("authorizers", expect.authorizers, outcomes)
        if expect.error is not None:
            mismatches += _check_text("error", expect.error, result.error, "no error")
        return mismatches

    def record(self, case: Case, result: Authorization) -> Any:
        """The expectation this answer meets exactly, as it is written in a suite (`--update`)."""
        recorded: dict[str, Any] = {
            "decision": result.decision, "authorizers": {step.authorizer: step.outcome for step in result.steps},
        }  # fmt: skip
        if result.error:
            recorded["error"] = result.error
        return recorded


def prepare_authorization(suite: Suite, versions: tuple[str, ...]) -> AuthorizationTarget:
    assert suite.configuration is not None
    document = suite.configuration.value
    loaded = _per_version(suite, AUTHORIZATION, "the AuthorizationConfiguration", versions,
                          lambda version: authorization.load(document, version))  # fmt: skip
    return AuthorizationTarget(loaded)


SurfaceTarget = WebhookTarget | DeviceTarget | AuthenticationTarget | AuthorizationTarget


def prepare(suite: Suite, versions: tuple[str, ...]) -> SurfaceTarget:
    """Make a surface suite ready to run at these versions; raises SuiteError naming the field at fault."""
    preparers: dict[str, Callable[[Suite, tuple[str, ...]], SurfaceTarget]] = {
        WEBHOOKS: prepare_webhooks, DEVICES: prepare_devices, AUTHENTICATION: prepare_authentication,
        AUTHORIZATION: prepare_authorization,
    }  # fmt: skip
    return preparers[suite.kind](suite, versions)
