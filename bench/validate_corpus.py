"""`kcel validate` over a directory of 1,000 manifests against a CEL-heavy CRD, and the CEL part against cel-python.

A CRD with 13 rules at four schema levels (spec, each container of a map list, each port, a labels map) and
schema checks (enum, pattern, bounds, maxLength, required, a set list) is generated into a temporary directory,
with 1,000 Widget manifests (one per file, every tenth one invalid). Cases, each over all 1,000 objects:

* kcel, whole pipeline: read and decode every file, prune, default, ObjectMeta, OpenAPI, list types, CEL
  (`kcel.k8s.crds.validate.validate_files`, what `kcel validate DIR` runs);
* kcel, CEL rules only: the compiled validator over the already decoded and defaulted objects;
* cel-python, CEL rules only: the same rules compiled once with celpy and evaluated at the same nodes (it has
  no CRD validator, so a hand-written walk finds the nodes; its cost is part of that case).

Run: PYTHONPATH=. .venv/bin/python bench/validate_corpus.py [--objects N] [--repeat N]
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness import Timing, arguments, measure, table, write_json

from kcel.k8s.crds.crd import load_crds
from kcel.k8s.crds.objects import validate_object
from kcel.k8s.crds.validate import Catalog, validate_files
from kcel.k8s.manifests.files import manifest_files

SPEC_RULES = [
    ("self.replicas <= self.maxReplicas", "replicas must not exceed maxReplicas"),
    ("self.minReplicas <= self.replicas", "replicas must be at least minReplicas"),
    ("self.containers.all(c, c.name.size() <= 63)", "container names are short"),
    ("self.containers.exists_one(c, c.role == 'main')", "exactly one main container"),
    ("!has(self.suspend) || !self.suspend || self.replicas == 0", "a suspended widget runs no replicas"),
    ("self.containers.map(c, c.name).size() == self.containers.size()", "names are listed"),
]
CONTAINER_RULES = [
    ("self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')", "bad container name"),
    ("self.image.contains(':') && !self.image.endsWith(':latest')", "images must be pinned"),
    ("self.image.startsWith('registry.example.com/')", "images come from our registry"),
    ("!has(self.cpu) || (self.cpu > 0.0 && self.cpu <= 64.0)", "cpu out of range"),
    ("self.ports.all(p, p.containerPort != 22)", "no ssh"),
]
PORT_RULES = [("self.containerPort > 1024 || self.name == 'http'", "low ports are for http")]
LABEL_RULES = [("self.all(k, k.size() < 64 && self[k].size() < 64)", "labels are short")]


def rules(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"rule": rule, "message": message} for rule, message in pairs]


def crd_document() -> dict[str, Any]:
    port = {"type": "object", "required": ["containerPort"], "x-kubernetes-validations": rules(PORT_RULES),
            "properties": {"containerPort": {"type": "integer", "minimum": 1, "maximum": 65535},
                           "name": {"type": "string", "maxLength": 15}}}  # fmt: skip
    container = {
        "type": "object", "required": ["name", "image"], "x-kubernetes-validations": rules(CONTAINER_RULES),
        "properties": {
            "name": {"type": "string", "maxLength": 63}, "image": {"type": "string", "maxLength": 256},
            "role": {"type": "string", "enum": ["main", "sidecar"], "default": "sidecar"},
            "cpu": {"type": "number"}, "ports": {"type": "array", "maxItems": 16, "items": port},
            "args": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        },
    }  # fmt: skip
    spec = {
        "type": "object", "required": ["replicas", "containers"], "x-kubernetes-validations": rules(SPEC_RULES),
        "properties": {
            "replicas": {"type": "integer", "minimum": 0}, "minReplicas": {"type": "integer", "default": 0},
            "maxReplicas": {"type": "integer", "default": 10}, "suspend": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["Fast", "Safe"], "default": "Safe"},
            "owner": {"type": "string", "pattern": "^[a-z]+@example\\.com$"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"},
                       "x-kubernetes-validations": rules(LABEL_RULES)},
            "containers": {"type": "array", "maxItems": 32, "x-kubernetes-list-type": "map",
                           "x-kubernetes-list-map-keys": ["name"], "items": container},
        },
    }  # fmt: skip
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]},
    }  # fmt: skip


def widget(i: int) -> dict[str, Any]:
    containers = [
        {"name": f"c{j}", "image": f"registry.example.com/app-{j}:{i}.{j}", "role": "main" if j == 0 else "sidecar",
         "cpu": 0.5, "ports": [{"containerPort": 8080 + j, "name": "http"}, {"containerPort": 9090, "name": "metrics"}],
         "args": ["--verbose", f"--id={j}"]}
        for j in range(5)
    ]  # fmt: skip
    spec = {"replicas": 3, "maxReplicas": 5, "owner": "team@example.com", "containers": containers,
            "labels": {f"team-{k}": f"value-{k}" for k in range(5)}}  # fmt: skip
    if i % 10 == 9:  # every tenth object breaks a rule and a schema check
        spec["replicas"] = 7
        containers[1]["image"] = "registry.example.com/app:latest"
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w-{i}"}, "spec": spec}


def write_corpus(folder: Path, count: int) -> tuple[Path, Path]:
    crd = folder / "crd.json"
    crd.write_text(json.dumps(crd_document()))
    objects = folder / "objects"
    objects.mkdir()
    for i in range(count):
        (objects / f"w-{i:04}.json").write_text(json.dumps(widget(i), indent=1))
    return crd, objects


# -- the CEL part with cel-python --------------------------------------------------------------------------


def nodes(obj: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(level, value) of every node a rule sits at, as the validator walks them."""
    spec = obj["spec"]
    yield "spec", spec
    if "labels" in spec:
        yield "labels", spec["labels"]
    for container in spec["containers"]:
        yield "container", container
        for port in container.get("ports", ()):
            yield "port", port


def celpy_rules() -> Callable[[dict[str, Any]], int]:
    import celpy
    from celpy import celtypes

    env = celpy.Environment()
    levels = {"spec": SPEC_RULES, "container": CONTAINER_RULES, "port": PORT_RULES, "labels": LABEL_RULES}
    programs = {level: [env.program(env.compile(rule)) for rule, _ in pairs] for level, pairs in levels.items()}

    def validate(obj: dict[str, Any]) -> int:
        failures = 0
        for level, value in nodes(obj):
            activation = {"self": celpy.json_to_cel(value)}
            for program in programs[level]:
                try:
                    result = program.evaluate(activation)
                    failures += not (isinstance(result, celtypes.BoolType) and bool(result))
                except Exception:  # an evaluation error counts as a failure, as for the API server
                    failures += 1
        return failures

    return validate


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--objects", type=int, default=1000, help="manifests to generate (default 1000)")
    parser.set_defaults(repeat=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        crd_file, objects_dir = write_corpus(Path(tmp), args.objects)
        catalog = Catalog.load([crd_file])
        files = manifest_files([objects_dir])
        reports = list(validate_files(files, catalog))
        invalid = sum(r.status == "invalid" for r in reports)
        assert invalid == args.objects // 10 and not any(r.status == "error" for r in reports), reports[:3]

        (crd,) = load_crds(crd_file)
        version = crd.versions[0]
        stored = [validate_object(crd, w, field_validation="Ignore").object for w in map(widget, range(args.objects))]
        cel = crd.validator(version)
        by_celpy = celpy_rules()
        kcel_failures = sum(len(cel.validate(obj).errors) for obj in stored)
        celpy_failures = sum(by_celpy(obj) for obj in stored)
        assert kcel_failures == celpy_failures == 2 * (args.objects // 10), (kcel_failures, celpy_failures)

        timings = measure(
            {
                "kcel, whole pipeline (files)": lambda: list(validate_files(files, catalog)),
                "kcel, CEL rules only": lambda: [cel.validate(obj) for obj in stored],
                "cel-python, CEL rules only": lambda: [by_celpy(obj) for obj in stored],
            },
            repeat=args.repeat,
            warmup=args.warmup,
        )
    rule_count = sum(1 for _ in cel.compiled())
    print(f"{args.objects} manifests, {rule_count} rules at 4 levels, 5 containers x 2 ports each; "
          f"{invalid} invalid; one sample = all objects")  # fmt: skip
    print(table(timings, reference="kcel, CEL rules only", unit="ms"))
    print(per_second(timings, args.objects))
    if args.json:
        write_json(args.json, "validate_corpus", timings, objects=args.objects, rules=rule_count)


def per_second(timings: list[Timing], objects: int) -> str:
    rates = [f"{t.name}: {objects / (t.median / 1e9):,.0f} objects/s" for t in timings]
    kcel, celpy = timings[1].median, timings[2].median
    return "\n".join([*rates, f"CEL part, cel-python / kcel: {celpy / kcel:.1f}x"])


if __name__ == "__main__":
    main()
