"""The Kubernetes base CEL environment, version by version (k8s.io/apiserver pkg/cel/environment/base.go).

Each option arrives in a Kubernetes version and some are removed later. An API server of version
1.N compiles expressions written or changed now in the "new" environment: the options in force at
its compatibility version, 1.(N-1) (`DefaultCompatibilityVersion`, so that a rollback still
understands them); expressions already persisted compile in the "stored" environment: every option
that API server knows and has not removed.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kcel.checker.decls import DeferredLibrary, loaded
from kcel.libs import Library
from kcel.libs.operators import cross_type_comparisons
from kcel.parser.macros import LISTS, OPTIONALS, STANDARD, TWO_VAR, Macro

Version = tuple[int, int]
OLDEST: Version = (1, 30)  # the oldest API server kcel answers as
LATEST: Version = (1, 37)  # the newest, and the default
# apiserver's DeclTypeProvider SetRecognizeKeywordAsFieldName, from this compatibility version (API server 1.32): a
# property named by a CEL reserved word (`namespace`) is selected as `self.namespace`; before, only as the escaped
# `self.__namespace__`. Stored expressions have it on every version.
KEYWORD_FIELD_NAMES: Version = (1, 31)


@dataclass(frozen=True)
class Option:
    """What the API server's CEL environment gained (and lost) in a Kubernetes version: libraries, macros, checks."""

    introduced: Version
    removed: Version | None = None
    libraries: tuple[tuple[str, int | None], ...] = ()
    macros: tuple[Macro, ...] = ()
    homogeneous_literals: bool = False
    cross_type_comparisons: bool = False
    literal_validators: bool = False  # cel.ASTValidators(duration, timestamp and regex literals)


BASE: tuple[Option, ...] = (
    Option((1, 0), libraries=(("k8s_url", None), ("k8s_regex", None)), homogeneous_literals=True),
    Option((1, 0), (1, 37), libraries=(("k8s_lists", 0),)),
    Option((1, 0), (1, 29), libraries=(("strings", 0),)),
    Option((1, 27), libraries=(("k8s_authz", 0),)),
    Option(
        (1, 28), libraries=(("optional", None), ("k8s_quantity", None)), macros=OPTIONALS, cross_type_comparisons=True
    ),  # fmt: skip
    Option((1, 29), libraries=(("strings", 2), ("sets", None)), literal_validators=True),
    Option((1, 30), libraries=(("k8s_ip", None),)),
    Option((1, 31), libraries=(("k8s_format", None), ("k8s_authz", 1))),
    Option((1, 32), macros=TWO_VAR),
    Option((1, 33), libraries=(("k8s_semver", 1),)),
    Option((1, 34), libraries=(("lists", 3),), macros=LISTS),
    Option((1, 37), libraries=(("k8s_lists", 1),)),
)


_VERSION = re.compile(r"v?([0-9]+)\.([0-9]+)(?:\.[0-9]+)?")


def parse_version(text: str) -> Version:
    """`"1.30"` -> (1, 30), as Kubernetes versions are written: `v1.30` (kubectl version's), and a patch release,
    `1.30.4`, as its minor (kcel answers as each minor's newest patch release, with the fixes backported to it)."""
    matched = _VERSION.fullmatch(text.strip())
    if matched is None:
        raise ValueError(
            f"invalid Kubernetes version {text!r}: expected MAJOR.MINOR, e.g. 1.30 (v1.30 and 1.30.4 are read as 1.30)"
        )
    return int(matched[1]), int(matched[2])


SUPPORTED = f"{OLDEST[0]}.{OLDEST[1]} to {LATEST[0]}.{LATEST[1]}"


def server_version(text: str | None) -> Version:
    """The API server a `k8s_version=`/`--k8s-version` names (None: the newest); raises ValueError outside the
    supported range, naming it."""
    if text is None:
        return LATEST
    version = parse_version(text)
    if not OLDEST <= version <= LATEST:
        raise ValueError(f"unsupported Kubernetes version {text}: kcel answers as Kubernetes {SUPPORTED}")
    return version


def compatibility(server: Version) -> Version:
    """An API server's default compatibility version: its minor - 1 (`MinCompatibilityVersion`)."""
    return server[0], server[1] - 1


DEFAULT_COMPATIBILITY = compatibility(LATEST)
NEWEST = f"{LATEST[0]}.{LATEST[1]}"


def supported_versions() -> tuple[str, ...]:
    """Every Kubernetes version kcel answers as, oldest first."""
    return tuple(f"{OLDEST[0]}.{minor}" for minor in range(OLDEST[1], LATEST[1] + 1))


def server_versions(text: str) -> tuple[str, ...]:
    """The versions a `--k8s-version` or `.kcel.yaml` names: one (`1.34`), a range (`1.30-1.37`, both ends
    included) or a list of either (`1.31,1.34`), in order and each once; ValueError names the first bad one."""
    found: list[Version] = []
    for part in (p.strip() for p in text.split(",")):
        first, dash, last = part.partition("-")
        low, high = server_version(first.strip()), server_version(last.strip() if dash else first.strip())
        if low > high:
            raise ValueError(f"invalid Kubernetes version range {part}: {first.strip()} is newer than {last.strip()}")
        found += [(low[0], minor) for minor in range(low[1], high[1] + 1)]
    return tuple(f"{major}.{minor}" for major, minor in sorted(set(found)))


def add_version_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, several: bool = False) -> None:
    """`--k8s-version 1.N`, the same in every command: answer as that API server (default: the newest); an
    unsupported version is a usage error (exit status 2) naming the supported range. With `several`, a range or
    list as well (`1.30-1.37`, `1.31,1.34`): the command answers at each, and says where they differ."""

    def checked(text: str) -> str:
        try:
            versions = server_versions(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        if len(versions) > 1 and not several:
            raise argparse.ArgumentTypeError(f"one version only here, not {text}")
        return versions[0] if len(versions) == 1 else text  # `v1.31.4` as `1.31`

    metavar, more = ("1.N[-1.M][,...]", ", or a range or list of them") if several else ("1.N", "")
    parser.add_argument(
        "--k8s-version", metavar=metavar, type=checked,
        help=f"answer as that Kubernetes API server, the newest patch release of 1.N: CEL environment, checks, "
        f"texts ({SUPPORTED}; default {NEWEST}{more})",
    )  # fmt: skip


def options(compatibility: Version, environment: str, server: Version = LATEST) -> list[Option]:
    """The base options in force: at the compatibility version ("new"), or every one the API server of version
    `server` knows and has not removed ("stored")."""
    if environment not in ("new", "stored"):
        raise ValueError(f"environment must be 'new' or 'stored', not {environment!r}")
    at = compatibility if environment == "new" else server
    return [o for o in BASE if o.introduced <= at and (o.removed is None or o.removed > at)]


@dataclass(frozen=True)
class Configuration:
    """The CEL environment of one Kubernetes version: its libraries and macros and how its checker behaves."""

    libraries: tuple[Library | DeferredLibrary, ...]
    macros: tuple[Macro, ...]
    homogeneous_literals: bool
    literal_validators: bool
    lenient_optional_or: bool  # cel-go before v0.28 (Kubernetes up to 1.36): `a.or(b)` with a non-optional `a` is `a`
    shared_macro_targets: bool  # cel-go before v0.22 (Kubernetes up to 1.31): optMap's target checked twice, one ids
    optional_type_name: str  # cel-go before v0.20 (Kubernetes 1.30) named it `optional`, with no `optional_type`
    literal_exemption_through_calls: bool  # cel-go v0.18+ (1.31+): format()'s literals exempt through any call
    optionals_through_go: bool  # cel-go before v0.29 (up to 1.36): a conditional's optional result via Go values


# Library behaviour that changed with the API server's own code rather than with an environment option: an API
# server older than the version given runs the library at the older version (its texts or results).
SERVER_BEHAVIOUR: tuple[tuple[str, Version, int], ...] = (
    ("k8s_format", (1, 35), 0),  # label key/value texts of util/validation (apimachinery da7b67ed)
    ("k8s_ip", (1, 33), 0),  # containsCIDR before apiserver 64791740a
    ("standard", (1, 37), 0),  # startsWith/endsWith and global matches costs before cel-go v0.29
    ("optional", (1, 33), 0),  # no optional.unwrap, unwrapOpt, first or last before cel-go v0.23
    ("timestamps", (1, 34), 0),  # duration(int) declared (and failing when evaluated) before cel-go v0.26
)


def configuration(compatibility: Version, environment: str = "new", server: Version = LATEST) -> Configuration:
    """Libraries, macros and checker options of the Kubernetes base environment (see `options`)."""
    chosen = options(compatibility, environment, server)
    cross_type = any(o.cross_type_comparisons for o in chosen)
    libraries = [_standard_operators(cross_type, server), *_load(["standard", "timestamps"], server)]
    by_name: dict[str, Library | DeferredLibrary] = {}
    for option in chosen:
        for module, library_version in option.libraries:
            found = _library_for(module, library_version, server)
            if found is not None:
                by_name[module] = found  # a later option's version replaces an earlier one's
    if server < (1, 31) and "strings" in by_name:  # cel-go 0.17 (1.30) had no format() validator
        by_name["strings"] = dataclasses.replace(loaded(by_name["strings"]), validators=())
    if server < (1, 37) and "strings" in by_name:  # indexOf, lastIndexOf and %e as each API server evaluates them
        from kcel.libs.strings import as_older_api_servers_evaluate

        by_name["strings"] = as_older_api_servers_evaluate(loaded(by_name["strings"]), server)
    libraries += by_name.values()
    macros = list(STANDARD)
    for option in chosen:
        macros += option.macros
    for chosen_library in by_name.values():  # a deferred library has no macros
        macros += () if isinstance(chosen_library, DeferredLibrary) else chosen_library.macros
    homogeneous = any(o.homogeneous_literals for o in chosen)
    validators = any(o.literal_validators for o in chosen)
    return Configuration(
        libraries=tuple(libraries),
        macros=tuple(dict.fromkeys(macros)),
        homogeneous_literals=homogeneous,
        literal_validators=validators,
        lenient_optional_or=server <= (1, 36),
        shared_macro_targets=server < (1, 32),
        optional_type_name="optional" if server < (1, 31) else "optional_type",
        literal_exemption_through_calls=server >= (1, 31),
        optionals_through_go=server <= (1, 36),
    )


def _standard_operators(cross_type: bool, server: Version) -> Library:
    """cel-go's operators; before 1.32 Kubernetes' estimator did not price `==` on its own types (apiserver
    cbc488649, 699942362), so cel-go's size-based estimate applied, unbounded for opaque values."""
    from kcel.libs import operators

    excluded = frozenset() if cross_type else cross_type_comparisons()
    kept = tuple(o for o in operators.LIBRARY.overloads if o.id not in excluded)
    if server < (1, 32):
        kept = tuple(
            dataclasses.replace(o, estimate=operators.compare_estimate) if o.id == "equals" else o for o in kept
        )
    return (
        operators.LIBRARY
        if kept == operators.LIBRARY.overloads
        else dataclasses.replace(operators.LIBRARY, overloads=kept)
    )


def _load(names: Sequence[str], server: Version) -> list[Library | DeferredLibrary]:
    return [lib for name in names if (lib := _library_for(name, None, server)) is not None]


# Libraries an environment loads only when an expression names one of their functions or types (the library's
# name, then those names at every version of it; tests/test_k8s_environment.py checks them against the tables).
DEFERRED: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "k8s_url": ("kubernetes.urls", frozenset({"getEscapedPath", "getHost", "getHostname", "getPort", "getQuery",
                "getScheme", "isURL", "url"}), frozenset({"kubernetes.URL"})),
    "k8s_regex": ("kubernetes.regex", frozenset({"find", "findAll"}), frozenset()),
    "k8s_lists": ("kubernetes.lists", frozenset({"includes", "indexOf", "isSorted", "lastIndexOf", "max", "min",
                  "sum"}), frozenset()),
    "k8s_authz": ("k8s_authz", frozenset({"allowed", "check", "error", "errored", "fieldSelector", "group",
                  "labelSelector", "name", "namespace", "path", "reason", "resource", "serviceAccount",
                  "subresource"}), frozenset()),
    "k8s_quantity": ("kubernetes.quantity", frozenset({"add", "asApproximateFloat", "asInteger", "compareTo",
                     "isGreaterThan", "isInteger", "isLessThan", "isQuantity", "quantity", "sign", "sub"}),
                     frozenset({"kubernetes.Quantity"})),
    "sets": ("sets", frozenset({"sets.contains", "sets.equivalent", "sets.intersects"}), frozenset()),
    "k8s_ip": ("kubernetes.net", frozenset({"cidr", "containsCIDR", "containsIP", "family", "ip", "ip.isCanonical",
               "isCIDR", "isGlobalUnicast", "isIP", "isLinkLocalMulticast", "isLinkLocalUnicast", "isLoopback",
               "isMask", "isUnspecified", "masked", "prefixLength", "string"}), frozenset({"net.CIDR", "net.IP"})),
    "k8s_format": ("kubernetes.format", frozenset({"format.byte", "format.date", "format.datetime",
                   "format.dns1035Label", "format.dns1035LabelPrefix", "format.dns1123Label",
                   "format.dns1123LabelPrefix", "format.dns1123Subdomain", "format.dns1123SubdomainPrefix",
                   "format.labelValue", "format.named", "format.qualifiedName", "format.uri", "format.uuid",
                   "validate"}), frozenset({"kubernetes.NamedFormat"})),
    "k8s_semver": ("kubernetes.Semver", frozenset({"compareTo", "isGreaterThan", "isLessThan", "isSemver", "major",
                   "minor", "patch", "semver"}), frozenset({"kubernetes.Semver"})),
}  # fmt: skip


def _library_for(module: str, version: int | None, server: Version) -> Library | DeferredLibrary | None:
    """A library at the version an option names, or at the older one an older API server's code had; one of
    `DEFERRED` is loaded when an expression first needs it."""
    for changed, since, older in SERVER_BEHAVIOUR:
        if module == changed and server < since:
            version = older
    if module in DEFERRED:
        name, functions, type_names = DEFERRED[module]
        return DeferredLibrary(name, functions, type_names, lambda: _library_once(module, version))
    return library(module, version)


@functools.cache
def _library_once(module: str, version: int | None) -> Library:
    found = library(module, version)
    assert found is not None, module
    return found


def library(module: str, version: int | None) -> Library | None:
    """A library module's table at a version; None if the module is not written yet."""
    try:
        loaded = importlib.import_module(f"kcel.libs.{module}")
    except ImportError:
        return None  # a library not written yet: its functions stay undeclared
    if version is not None and hasattr(loaded, "library"):
        return loaded.library(version)  # type: ignore[no-any-return]
    return loaded.LIBRARY  # type: ignore[no-any-return]
