"""Every CEL environment Kubernetes compiles expressions in, by name: what `kcel eval --env NAME` and the REPL's
`%option --env NAME` use.

`crd` is a CRD rule's (`self`, `oldSelf` as dyn; `kcel validate` and `%load` type them by the schema),
`validating-policy` and `mutating-policy` are the admission policies' (with `params`; the mutating one with the
`Object`/`JSONPatch` types), the others come from the surface modules (`webhook-match`, `dra-selector`,
`authn-claims`, `authn-user`, `authz-match`). Each is the environment of a new expression at the API server's
compatibility version, as upstream compiles one on create.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kcel.checker.types import DYN
from kcel.env import Env
from kcel.k8s.admission.compilation import Environments, VariablesType
from kcel.k8s.environment import NEWEST
from kcel.k8s.surfaces import authentication, authorization, dra, webhooks

SURFACES = (webhooks, dra, authentication, authorization)  # each: ENVIRONMENTS, KINDS, check()


def _crd(k8s_version: str) -> Env:
    return Env({"self": DYN, "oldSelf": DYN}, k8s_version=k8s_version)


def _policy(patch_types: bool) -> Callable[[str], Env]:
    def build(k8s_version: str) -> Env:
        return Environments(Env(k8s_version=k8s_version)).declare(True, True, VariablesType({}), patch_types)

    return build


def environments() -> Mapping[str, Callable[[str], Env]]:
    """Every environment by name, with a function building it for a Kubernetes version ("1.N")."""
    found: dict[str, Callable[[str], Env]] = {
        "crd": _crd, "validating-policy": _policy(False), "mutating-policy": _policy(True),
    }  # fmt: skip
    for module in SURFACES:
        found |= module.ENVIRONMENTS
    return found


def environment(name: str, k8s_version: str | None = None) -> Env:
    """The named environment for an API server version (default the newest); ValueError lists the names."""
    known = environments()
    if name not in known:
        raise ValueError(f"unknown environment {name!r}: one of {', '.join(known)}")
    return known[name](k8s_version or NEWEST)
