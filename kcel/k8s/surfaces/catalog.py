"""The functions and macros an expression can call where it is (a CRD rule, a policy...), at a Kubernetes version,
with the versions that have each function: for the editor's completion, signature help and hover, and for the hints
that follow an error (`did you mean`, the first version that has a function)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from kcel.checker.decls import Overload
from kcel.k8s.environment import LATEST, OLDEST

MACROS = {
    "has": "has(x.f) -> bool", "all": "list.all(x, p) -> bool", "exists": "list.exists(x, p) -> bool",
    "exists_one": "list.exists_one(x, p) -> bool", "map": "list.map(x, f) -> list",
    "filter": "list.filter(x, p) -> list",
}  # fmt: skip
# The environment of the expressions of each kind of object that holds CEL, by (API group, kind).
_ENVIRONMENTS = {
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "crd",
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): "validating-policy",
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): "mutating-policy",
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): "webhook-match",
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): "webhook-match",
    ("resource.k8s.io", "DeviceClass"): "dra-selector", ("resource.k8s.io", "ResourceClaim"): "dra-selector",
    ("resource.k8s.io", "ResourceClaimTemplate"): "dra-selector",
    ("apiserver.config.k8s.io", "AuthenticationConfiguration"): "authn-claims",
    ("apiserver.config.k8s.io", "AuthorizationConfiguration"): "authz-match",
}  # fmt: skip


def environment_name(document: Any) -> str:
    """The CEL environment of a document's expressions (a CRD's rules when the kind is unknown)."""
    if not isinstance(document, Mapping):
        return "crd"
    group = str(document.get("apiVersion", "")).rpartition("/")[0]
    return _ENVIRONMENTS.get((group, str(document.get("kind", ""))), "crd")


@cache
def functions(name: str, version: str | None) -> Mapping[str, tuple[Overload, ...]]:
    """Every function callable in the named environment, by name, with its overloads."""
    from kcel.k8s.surfaces.environments import environment

    found: dict[str, list[Overload]] = {}
    for overload in environment(name, version).overloads_by_id.values():
        if overload.function[:1].isalpha():  # not an operator
            found.setdefault(overload.function, []).append(overload)
    return {function: tuple(overloads) for function, overloads in sorted(found.items())}


def signature(overload: Overload) -> str:
    """`string.startsWith(string) -> bool`, as cel-go's documentation writes it."""
    args = [str(a) for a in overload.args]
    if overload.member and args:
        return f"{args[0]}.{overload.function}({', '.join(args[1:])}) -> {overload.result}"
    return f"{overload.function}({', '.join(args)}) -> {overload.result}"


@cache
def versions_with(name: str, function: str) -> tuple[str, ...]:
    """The Kubernetes versions whose environment has the function (a library arrives with a version)."""
    every = [f"1.{minor}" for minor in range(OLDEST[1], LATEST[1] + 1)]
    return tuple(v for v in every if function in functions(name, v))


def versions_text(versions: Sequence[str]) -> str:
    if not versions:
        return "no Kubernetes version kcel knows"
    return f"Kubernetes {versions[0]} and later" if versions[-1] == f"1.{LATEST[1]}" else ", ".join(versions)
