"""`kcel check` for everything but CRDs: admission policies and the objects of every other CEL surface, each
checked as the API server checks it on create (or the component that loads it, on start-up), and a reason for
every document that holds no CEL kcel checks (a Deployment), so that a run that checked nothing is not a success.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel.k8s.manifests.decoding import Document, decode_documents
from kcel.k8s.surfaces import Checked

if TYPE_CHECKING:
    from kcel.k8s.admission.compilation import CompiledPolicy
    from kcel.k8s.admission.mutation import CompiledMutatingPolicy

ADMISSION_GROUP = "admissionregistration.k8s.io"
POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy",
                "MutatingAdmissionPolicyBinding")  # fmt: skip
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
# Surfaces whose alpha and beta API versions kcel refuses unless assumed switched on: their check takes
# `runtime_config` (kcel.k8s.surfaces.dra).
SWITCHED_ON_GROUPS = frozenset({"resource.k8s.io"})

Checker = Callable[[Mapping[str, Any], str, str], Checked]


@dataclass
class CheckRun:
    """What `kcel check` found beyond CRDs: one Checked per object, skipped documents with why, unreadable ones."""

    checked: list[tuple[str, Checked]] = field(default_factory=list)  # (where, result)
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    crds: int = 0  # CRD documents seen (the caller checks them)


def _checkers() -> dict[tuple[str, str], Checker]:
    """Each surface kind's check (the surfaces and the admission machinery they share are imported only now: a run
    over CRDs alone needs none of them)."""
    from kcel.k8s.surfaces.environments import SURFACES

    found: dict[tuple[str, str], Checker] = {}
    for module in SURFACES:
        found |= {kind: module.check for kind in module.KINDS}
    return found


def checker_for(obj: Mapping[str, Any]) -> Checker | None:
    """The check of a surface object's kind (a webhook configuration, a DeviceClass...), if kcel has one."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return _checkers().get((group, str(obj.get("kind", ""))))


def _objects(path: Path, run: CheckRun, given: list[Document] | None) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if given is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            run.problems.append(f"{path}: cannot read: {err}")
            return
    for document in decode_documents(text, str(path)) if given is None else given:
        where = f"{path}: document {document.index}"
        if document.error:
            run.problems.append(document.error)
        elif isinstance(document.value, Mapping):
            items = document.value.get("items")
            if str(document.value.get("kind", "")).endswith("List") and isinstance(items, list):
                yield from ((f"{where}: items[{i}]", item) for i, item in enumerate(items) if isinstance(item, Mapping))
            else:
                yield where, document.value
        elif document.value is not None:  # an error, once: kcel check's CRD reader says so too (and this is dropped)
            run.problems.append(f"{where}: not a Kubernetes object: an object with apiVersion and kind is needed")


def check_files(
    files: Iterable[Path], k8s_version: str, report_unreadable: bool = True,
    documents: Callable[[Path], list[Document] | None] | None = None, runtime_config: Sequence[str] = (),
) -> CheckRun:  # fmt: skip
    """Every document of the files: policies compiled together (bindings and params beside them), surface objects
    one by one, the rest skipped with the reason. `report_unreadable=False` leaves files and documents that do not
    decode to a caller that reads the same files for CRDs (and reports them already). `documents`: a file's
    documents when they are not its text's (kustomize patches applied), else None. `runtime_config`: the alpha and
    beta policy API versions assumed switched on (kcel.k8s.admission.served)."""
    run = CheckRun()
    checkers: dict[tuple[str, str], Checker] | None = None
    unreadable: list[str] = []
    policy_files: list[Path] = []
    for path in files:
        known = len(run.problems)
        objects = list(_objects(path, run, documents(path) if documents is not None else None))
        unreadable += run.problems[known:]
        for where, obj in objects:
            group = str(obj.get("apiVersion", "")).rpartition("/")[0]
            kind = str(obj.get("kind", ""))
            if (group, kind) == CRD:
                run.crds += 1
            elif group == ADMISSION_GROUP and kind in POLICY_KINDS:
                if path not in policy_files:
                    policy_files.append(path)
            elif (group, kind) in (checkers := checkers if checkers is not None else _checkers()):
                check: Callable[..., Checked] = checkers[group, kind]
                if group in SWITCHED_ON_GROUPS:
                    check = functools.partial(check, runtime_config=runtime_config)
                run.checked.append((where, check(obj, where, k8s_version)))
            else:
                what = f"{kind} ({obj.get('apiVersion')})" if kind else "a document without a kind"
                run.skipped.append(f"{where}: {what} holds no CEL that kcel checks")
    if policy_files:
        _check_policies(policy_files, k8s_version, run, runtime_config)
    if not report_unreadable:
        run.problems = [p for p in run.problems if p not in unreadable]
    return run


def _check_policies(files: list[Path], k8s_version: str, run: CheckRun, runtime_config: Sequence[str]) -> None:
    from kcel.k8s.admission.loading import load
    from kcel.k8s.admission.policyset import PolicySet

    loaded = load(files)
    policies = PolicySet(loaded, k8s_version, runtime_config=runtime_config)
    compiled_policies: list[CompiledPolicy | CompiledMutatingPolicy] = [*policies.policies, *policies.mutating_policies]
    for compiled in compiled_policies:
        source = compiled.policy.source
        errors = tuple(p.removeprefix(f"{source}: ") for p in policies.problems if p.startswith(f"{source}: "))
        checked = Checked(_kind(compiled), compiled.policy.name, _expressions(compiled), errors)
        run.checked.append((source, checked))
    sources = {compiled.policy.source for compiled in compiled_policies}
    run.problems += [p for p in policies.problems if not any(p.startswith(f"{s}: ") for s in sources)]


def _kind(compiled: CompiledPolicy | CompiledMutatingPolicy) -> str:
    from kcel.k8s.admission.mutation import CompiledMutatingPolicy

    return "MutatingAdmissionPolicy" if isinstance(compiled, CompiledMutatingPolicy) else "ValidatingAdmissionPolicy"


def _expressions(compiled: CompiledPolicy | CompiledMutatingPolicy) -> int:
    from kcel.k8s.admission.mutation import CompiledMutatingPolicy

    count = len(compiled.variables) + len(compiled.match_conditions)
    if isinstance(compiled, CompiledMutatingPolicy):
        return count + len(compiled.mutations)
    return count + len(compiled.validations) + sum(1 for m in compiled.messages if m) + len(compiled.audit_annotations)


def report(where: str, checked: Checked) -> dict[str, Any]:
    """One checked object as `kcel check -o json` prints it."""
    return {
        "source": where, "kind": checked.kind, "name": checked.name, "expressions": checked.expressions,
        "valid": checked.valid, "errors": list(checked.errors), "warnings": list(checked.warnings),
    }  # fmt: skip
