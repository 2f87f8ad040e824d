"""Runs the Kubernetes test tables transcribed in `k8s-cases` (format in that directory's README)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import kcel
from conformance import k8s_correlation_cases, k8s_crd_cases, k8s_field_cases, k8s_schema_cases
from conformance.k8s_values import decode, kcel_equal
from conformance.outcome import Case, Outcome, SkipList, Unsupported
from kcel.checker.types import BOOL, CelType
from kcel.env import load_library
from kcel.k8s.environment import DEFAULT_COMPATIBILITY, LATEST, configuration, parse_version
from kcel.k8s.environment import library as k8s_library
from kcel.k8s.schemas.decltypes import DeclField, DeclType, assign_type_name, schema_decl_type
from kcel.k8s.schemas.escaping import unescape
from kcel.k8s.schemas.schema import Schema
from kcel.libs import Library, Overload, SizedCall
from kcel.parser.macros import OPTIONALS, STANDARD, TWO_VAR

# Kinds this runner does not run yet, and the issue that brings them.
PENDING_KINDS: dict[str, str] = {}

# Library names as the cases write them -> (kcel library module key, version or None).
LIBRARIES: dict[str, tuple[str, int | None]] = {
    "cel.OptionalTypes": ("optional", None), "ext.Sets": ("sets", None), "ext.Strings(latest)": ("strings", 4),
    "ext.Strings(version 2)": ("strings", 2), "kubernetes.Semver": ("k8s_semver", 0),
    "kubernetes.Semver(version 1)": ("k8s_semver", 1), "kubernetes.authz": ("k8s_authz", None),
    "kubernetes.authzSelectors": ("k8s_authz", None), "kubernetes.format": ("k8s_format", None),
    "kubernetes.lists(latest)": ("k8s_lists", 1), "kubernetes.lists(version 1)": ("k8s_lists", 1),
    "kubernetes.net.cidr": ("k8s_ip", None), "kubernetes.net.ip": ("k8s_ip", None),
    "kubernetes.quantity": ("k8s_quantity", None), "kubernetes.regex": ("k8s_regex", None),
    "kubernetes.urls": ("k8s_url", None), "ext.TwoVarComprehensions": ("", None),
    "kubernetes.jsonpatch": ("k8s_jsonpatch", None),
}  # fmt: skip


def load(directory: Path) -> Iterator[Case]:
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for case in document.get("cases", []):
            yield Case(case["id"], path.stem, case)


def run(case: Case, skips: SkipList | None = None) -> Outcome:
    reason = skips.reason(case.id) if skips else None
    if reason is None and case.data["kind"] in PENDING_KINDS:
        reason = f"needs {PENDING_KINDS[case.data['kind']]}"
    if reason is not None:
        return Outcome(case.id, "skipped", reason)
    try:
        return _run(case)
    except Unsupported as err:
        return Outcome(case.id, "skipped", str(err))
    except Exception as err:  # a crash is reported, never allowed to stop the run
        return Outcome(case.id, "failed", f"crashed: {type(err).__name__}: {err}")


def _run(case: Case) -> Outcome:
    runner = RUNNERS.get(case.data["kind"])
    if runner is None:
        raise Unsupported(f"kind {case.data['kind']!r} is not run yet")
    return runner(case)


def _eval(case: Case) -> Outcome:
    data = case.data
    # cost_test.go builds its programs without OptOptimize: constant literals are not folded there.
    env = _environment(data.get("env", {}), data.get("inputs", {}).get("variables", {}), data["kind"] != "cost")
    variables = {name: _variable(value) for name, value in data.get("inputs", {}).get("variables", {}).items()}
    expect = data["expect"]
    try:
        program = env.compile(data["expression"])
    except kcel.CompileError as err:
        return _expected_compile_error(case, expect, str(err))
    if "compile_error" in expect:
        return Outcome(case.id, "failed", "expected a compile error")
    if "estimated_cost" in expect:
        # cost_test.go's size estimator: any string or bytes of unknown size is at most 12 long
        estimated = env.estimate_cost(program, sizes=kcel.StringSizes(12))
        wanted = kcel.CostEstimate(expect["estimated_cost"]["min"], expect["estimated_cost"]["max"])
        if estimated != wanted:
            return Outcome(case.id, "failed", f"estimated {estimated}, expected {wanted}")
    try:
        value, cost = program.evaluate_with_cost(variables)
    except kcel.EvalError as err:
        return _expected_runtime_error(case, expect, str(err))
    if "runtime_error" in expect:
        return Outcome(case.id, "failed", f"expected an error, got {value!r}")
    if "value" in expect and not kcel_equal(decode(expect["value"]), value):
        return Outcome(case.id, "failed", f"expected {expect['value']!r}, got {value!r}")
    if "runtime_cost" in expect and expect["runtime_cost"] != cost:
        return Outcome(case.id, "failed", f"runtime cost {cost}, expected {expect['runtime_cost']}")
    return Outcome(case.id, "passed")


def _call_result_size_estimate(case: Case) -> Outcome:
    """cost_test.go TestSize: Kubernetes' estimate of a call's result size from its arguments' sizes alone."""
    data, inputs = case.data, case.data["inputs"]
    sizes = [kcel.SizeEstimate(s["min"], s["max"]) for s in [inputs["target_size"], *inputs["arg_sizes"]]]
    env = kcel.Env(compatibility_version=".".join(map(str, LATEST)))
    candidates = [o for o in env.overloads(data["function"]) if o.member]
    found = {o.estimate(SizedCall(sizes)).result_size for o in candidates if o.estimate and len(o.args) == len(sizes)}
    wanted = kcel.SizeEstimate(data["expect"]["result_size"]["min"], data["expect"]["result_size"]["max"])
    if found != {wanted}:
        return Outcome(case.id, "failed", f"result sizes {found}, expected {wanted}")
    return Outcome(case.id, "passed")


def _env_compatibility(case: Case) -> Outcome:
    """environment_test.go: an expression is valid if it compiles and evaluates to true."""
    env_spec, expect = case.data["env"], case.data["expect"]
    version = env_spec["compatibility_version"]
    if version == "DefaultCompatibilityVersion()":
        version = ".".join(map(str, DEFAULT_COMPATIBILITY))
    environment = "stored" if env_spec["env_type"] == "StoredExpressions" else "new"
    if "valid_if_compat_at_least_1.37" in expect:  # the gate itself, at both sides, not at kcel's own default
        return _both_sides_of_a_gate(case, environment, bool(expect["valid_if_compat_at_least_1.37"]))
    variables: dict[str, Any] = {}
    types: dict[str, CelType] = {}
    libraries: dict[str, Library] = {}
    for extra in env_spec.get("extra_versioned_options", []):
        removed = parse_version(extra["removed"]) if "removed" in extra else None
        if environment == "stored":
            in_force = removed is None
        else:
            in_force = parse_version(extra["introduced"]) <= parse_version(version) and (
                removed is None or parse_version(version) < removed
            )
        if not in_force:
            continue
        declares = extra["declares"]
        types.update({name: _object_type(name, fields) for name, fields in declares.get("types", {}).items()})
        variables.update({name: types.get(t, t) for name, t in declares.get("variables", {}).items()})
        if "library" in declares:
            library = _test_library(declares["library"])
            libraries[library.name] = library  # a later version of the library replaces an earlier one
    bindings = {name: _variable(value) for name, value in case.data["inputs"]["variables"].items()}
    try:
        base = configuration(parse_version(version), environment).libraries
        everything = [*base, *libraries.values()] if libraries else None
        env = kcel.Env(compatibility_version=version, environment=environment, libraries=everything)
        valid = env.extend(variables).compile(case.data["expression"]).evaluate(bindings) is True
    except kcel.CelError:
        valid = False
    wanted = expect.get("valid")
    return Outcome(case.id, "passed") if valid == wanted else Outcome(case.id, "failed", f"valid={valid}")


def _both_sides_of_a_gate(case: Case, environment: str, valid_from: bool) -> Outcome:
    """`valid_if_compat_at_least_1.37`: valid as given at compatibility version 1.37, the other way at 1.36."""
    found = {}
    for version, wanted in (("1.37", valid_from), ("1.36", not valid_from)):
        try:
            env = kcel.Env(compatibility_version=version, environment=environment)
            found[version] = env.compile(case.data["expression"]).evaluate({}) is True
        except kcel.CelError:
            found[version] = False
        if found[version] != wanted:
            return Outcome(case.id, "failed", f"valid={found[version]} at compatibility version {version}")
    return Outcome(case.id, "passed")


def _object_type(name: str, fields: Mapping[str, str]) -> CelType:
    """A declared object type (`{"Widget": {"x": "string"}}`): escaped field names, data under the raw ones."""
    declared = {
        field: DeclField(field, unescape(field) or field, DeclType(type_name, None))
        for field, type_name in fields.items()
    }
    return DeclType("object", None, name=name, fields=declared).cel


def _test_library(description: str) -> Library:
    """`kubernetes.test version 1: test() returns false, testV1() returns true` as a library."""
    name, _, functions = description.partition(": ")
    overloads = []
    for spec in functions.split(", "):
        function, _, result = spec.partition("() returns ")
        value = result == "true"
        overloads.append(Overload(f"{function}_{result}", function, (), BOOL, lambda value=value: value))
    return Library(name.split(" version ")[0], overloads=tuple(overloads))


def _library_function_names(case: Case) -> Outcome:
    """library_compatibility_test.go: every listed name is declared by a Kubernetes library."""
    # The base environment's libraries plus JSONPatch, which MutatingAdmissionPolicy environments add.
    libraries = [*configuration(LATEST, "stored").libraries, _library("k8s_jsonpatch", None)]
    declared = {o.function for library in libraries for o in library.overloads}
    missing = [n for n in case.data["expect"]["function_names_declared"] if n not in declared]
    return Outcome(case.id, "failed", f"undeclared: {missing}") if missing else Outcome(case.id, "passed")


def _expected_compile_error(case: Case, expect: Mapping[str, Any], message: str) -> Outcome:
    wanted = expect.get("compile_error", {})
    if wanted.get("match") == "any":
        return Outcome(case.id, "passed")
    patterns = wanted.get("patterns")
    if patterns is None:
        return Outcome(case.id, "failed", f"compile: {message.splitlines()[0]}")
    missing = [p for p in patterns if not re.search(p, message)]
    if missing:
        return Outcome(case.id, "failed", f"compile error {message!r} lacks {missing}")
    # ... and every issue is matched by a pattern (the suite's README): no error beyond those expected
    issues = [issue for issue in re.split(r"\n(?=ERROR: )", message) if issue.strip()]
    unmatched = [issue.splitlines()[0] for issue in issues if not any(re.search(p, issue) for p in patterns)]
    if unmatched:
        return Outcome(case.id, "failed", f"compile error has issues no pattern matches: {unmatched}")
    return Outcome(case.id, "passed")


def _expected_runtime_error(case: Case, expect: Mapping[str, Any], message: str) -> Outcome:
    spec = expect.get("runtime_error")
    if spec is None:
        return Outcome(case.id, "failed", f"eval error: {message}")
    ok = message == spec["pattern"] if spec["match"] == "exact" else re.search(spec["pattern"], message) is not None
    return Outcome(case.id, "passed") if ok else Outcome(case.id, "failed", f"error {message!r} vs {spec['pattern']!r}")


def _environment(env: Mapping[str, Any], variables: Mapping[str, Any], optimize: bool) -> kcel.Env:
    if "variable_types" in env:  # compiling_test.go: the base environment, variables typed by schemas
        typed = {
            name: assign_type_name(_schema_type(spec["schema"]), spec["type_name"]).cel
            for name, spec in env["variable_types"].items()
        }
        return kcel.Env(compatibility_version=".".join(map(str, DEFAULT_COMPATIBILITY)), optimize=optimize).extend(
            typed
        )
    libraries = [load_library(name) for name in ("operators", "standard", "timestamps")]
    macros = list(STANDARD)
    for name in env.get("libraries", []):
        if name not in LIBRARIES:
            raise Unsupported(f"unknown library {name}")
        module, version = LIBRARIES[name]
        if name == "kubernetes.Semver" and "semver_library_version" in env:
            version = int(env["semver_library_version"])
        if name == "ext.TwoVarComprehensions":
            macros += TWO_VAR
        elif name == "cel.OptionalTypes":
            macros += OPTIONALS
        if module:
            library = _library(module, version)
            if library not in libraries:
                libraries.append(library)
                macros += library.macros
    declared = {name: "dyn" for name in variables}
    return kcel.Env(variables=declared, libraries=libraries, macros=macros, optimize=optimize)


def _schema_type(schema: Any) -> DeclType:
    decl = schema_decl_type(Schema.from_json(schema), True)
    if decl is None:
        raise Unsupported("the schema is not visible to CEL")
    return decl


def _library(module: str, version: int | None) -> Library:
    loaded = k8s_library(module, version)
    if loaded is None:
        raise Unsupported(f"library kcel.libs.{module} is not written yet")
    return loaded


def _variable(value: Any) -> Any:
    """An input variable; `{"authorizer": "always-allow"}` is the Go tests' allow-all authorizer."""
    if value == {"authorizer": "always-allow"}:
        from kcel.libs.k8s_authz import AlwaysAllow, authorizer_value

        return authorizer_value(AlwaysAllow())
    return decode(value)


RUNNERS: dict[str, Callable[[Case], Outcome]] = {
    "eval": _eval, "cost": _eval, "env_compatibility": _env_compatibility,
    "call_result_size_estimate": _call_result_size_estimate,
    "library_function_names": _library_function_names,
    **k8s_field_cases.RUNNERS, **k8s_correlation_cases.RUNNERS, **k8s_crd_cases.RUNNERS,
    **k8s_schema_cases.RUNNERS,
}  # fmt: skip
