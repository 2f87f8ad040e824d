"""Which admissionregistration.k8s.io versions of the admission policies an API server serves: by default, only
when switched on, or not at all.

Alpha and beta API versions introduced since Kubernetes 1.24 are off unless kube-apiserver's `--runtime-config`
turns them on (`admissionregistration.k8s.io/v1beta1=true`), and MutatingAdmissionPolicy needed its feature gate
too until it became GA in 1.36 (k8s.io/apiserver pkg/features `MutatingAdmissionPolicy`: alpha 1.32, beta 1.34,
both off by default). Each version stops being served in the release its prerelease lifecycle removes it
(k8s.io/api admissionregistration/v1alpha1 and v1beta1, zz_generated.prerelease-lifecycle.go). kcel answers as a
cluster on its defaults unless told which of these versions to assume on (`--runtime-config`, `runtime_config=`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass

from kcel.k8s.environment import Version

GROUP = "admissionregistration.k8s.io"
GATE = "MutatingAdmissionPolicy"
VALIDATING_KIND, MUTATING_KIND = "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"


@dataclass(frozen=True)
class Lifecycle:
    """One API version of a policy kind (and its binding): when it came and went, and whether it is on by default."""

    introduced: Version
    removed: Version | None = None  # the first release that no longer serves it, even when asked to
    by_default: bool = False  # GA: served without --runtime-config
    gated_until: Version | None = None  # before this release, the feature gate is needed as well


LIFECYCLES: dict[str, dict[str, Lifecycle]] = {
    VALIDATING_KIND: {
        "v1alpha1": Lifecycle((1, 26), (1, 32)),
        "v1beta1": Lifecycle((1, 28), (1, 34)),
        "v1": Lifecycle((1, 30), by_default=True),
    },
    MUTATING_KIND: {
        "v1alpha1": Lifecycle((1, 32), (1, 38), gated_until=(1, 36)),
        "v1beta1": Lifecycle((1, 34), (1, 40), gated_until=(1, 36)),
        "v1": Lifecycle((1, 36), by_default=True),
    },
}


def add_runtime_config_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--runtime-config GROUP/VERSION`, the same in kcel admit, audit and serve; a malformed one is a usage error."""

    def checked(text: str) -> str:
        try:
            runtime_config([text])
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return text

    parser.add_argument(
        "--runtime-config", action="append", default=[], metavar="GROUP/VERSION", type=checked,
        help=f"assume the API server serves this alpha or beta API version (kube-apiserver's --runtime-config, "
        f"with the feature gate it needs: {GROUP}/v1beta1 for MutatingAdmissionPolicy v1beta1; api/beta, "
        f"api/alpha, api/all; repeatable). By default they are refused, as a cluster on its defaults refuses them",
    )  # fmt: skip


def runtime_config(values: Iterable[str]) -> frozenset[str]:
    """The API versions `--runtime-config` assumes on, as kube-apiserver spells them: `GROUP/VERSION[=true|false]`,
    comma-separated and repeatable, or `api/all`, `api/beta`, `api/alpha`; ValueError names a malformed entry."""
    enabled: set[str] = set()
    for value in values:
        for entry in (part.strip() for part in value.split(",")):
            if not entry:
                continue
            key, equals, setting = entry.partition("=")
            if setting.lower() not in (("true", "false") if equals else ("",)) or key.count("/") != 1:
                raise ValueError(
                    f"invalid --runtime-config entry {entry!r}: expected GROUP/VERSION[=true|false], e.g. "
                    f"{GROUP}/v1beta1, or api/all, api/beta, api/alpha"
                )
            (enabled.discard if setting.lower() == "false" else enabled.add)(key)
    return frozenset(enabled)


def unserved(kind: str, api_version: str, server: Version, enabled: frozenset[str]) -> str | None:
    """Why an API server of version `server`, with the versions in `enabled` switched on, does not serve `kind` (a
    policy kind or its binding's) at `api_version` (a sentence to follow the document's name), or None when it does."""
    lifecycles = LIFECYCLES[kind.removesuffix("Binding")]
    version = api_version.rpartition("/")[2]
    lifecycle = lifecycles.get(version) if api_version.startswith(f"{GROUP}/") else None
    release = f"{server[0]}.{server[1]}"
    if lifecycle is None or server < lifecycle.introduced or (lifecycle.removed and server >= lifecycle.removed):
        return f"{api_version} {kind} is not served by Kubernetes {release} ({_served(lifecycles)})"
    if lifecycle.by_default or switched_on(api_version, enabled):
        return None
    gated = lifecycle.gated_until is not None and server < lifecycle.gated_until
    return needs_switching_on(api_version, kind, server, GATE if gated else None)


def needs_switching_on(api_version: str, kind: str, server: Version, gate: str | None = None) -> str:
    """The sentence for a `kind` of an alpha or beta `api_version` that the API server serves only when switched on
    (with `gate`, a feature gate off by default, as well): the switches, and kcel's option that assumes them."""
    switches = f"--runtime-config={api_version}=true" + (f" --feature-gates={gate}=true" if gate else "")
    return (
        f"{api_version} {kind} is served by Kubernetes {server[0]}.{server[1]} only when switched on (kube-apiserver "
        f"{switches}); --runtime-config {api_version} (runtime_config= in the API) assumes it is"
    )


def switched_on(api_version: str, enabled: frozenset[str]) -> bool:
    """Whether `enabled` (kcel.k8s.admission.served.runtime_config) switches `api_version` on."""
    version = api_version.rpartition("/")[2]
    stage = "alpha" if "alpha" in version else "beta"
    return bool({api_version, "api/all", f"api/{stage}"} & enabled)


def _served(lifecycles: dict[str, Lifecycle]) -> str:
    """`v1alpha1 1.26-1.31 when switched on, …, v1 from 1.30`."""
    described = []
    for version, lifecycle in lifecycles.items():
        since = f"{lifecycle.introduced[0]}.{lifecycle.introduced[1]}"
        if lifecycle.removed is None:
            span = f"from {since}"
        else:
            span = f"{since}-{lifecycle.removed[0]}.{lifecycle.removed[1] - 1}"
        described.append(f"{version} {span}" + ("" if lifecycle.by_default else " when switched on"))
    return ", ".join(described)
