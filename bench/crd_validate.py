"""End-to-end CRD validation of a realistic custom resource: kcel's Validator vs the same checks in plain Python.

The CRD has eight rules at four schema levels (the root spec, every container of a 100-item
map list, every port of each container, a labels map), one of them a transition rule. Each round
validates one object on create and on update (with its old version, so ratcheting and oldSelf
correlation run). The reference is a hand-written Python function doing the same checks, the
floor any engine can approach; cel-python has no CRD validator, so it is not in this table.
Building the validator is timed twice: cold (the process-wide cache of compiled rules emptied first, so every rule
is compiled; the CEL environments stay built) and with that cache warm (a second validator for the same schema only
walks it and looks its rules up).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from harness import arguments, measure, table, write_json

from kcel.k8s.rules.validation import Validator, forget_compiled_rules
from kcel.k8s.schemas.schema import Schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas"},
                {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable"},
                {"rule": "self.containers.all(c, c.name.size() <= 63)"},
            ],
            "properties": {
                "replicas": {"type": "integer"},
                "maxReplicas": {"type": "integer"},
                "mode": {"type": "string", "enum": ["Fast", "Safe"]},
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "x-kubernetes-validations": [{"rule": "self.all(k, k.size() < 64 && self[k].size() < 64)"}],
                },
                "containers": {
                    "type": "array",
                    "maxItems": 200,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name", "image"],
                        "x-kubernetes-validations": [
                            {"rule": "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')", "message": "bad name"},
                            {"rule": "self.image.contains(':') && !self.image.endsWith(':latest')"},
                            {"rule": "!has(self.cpu) || self.cpu > 0.0 && self.cpu <= 64.0"},
                        ],
                        "properties": {
                            "name": {"type": "string", "maxLength": 63},
                            "image": {"type": "string"},
                            "cpu": {"type": "number"},
                            "ports": {
                                "type": "array",
                                "x-kubernetes-list-type": "atomic",
                                "items": {
                                    "type": "object",
                                    "x-kubernetes-validations": [
                                        {"rule": "self.containerPort > 0 && self.containerPort < 65536"}
                                    ],
                                    "properties": {"containerPort": {"type": "integer"}, "name": {"type": "string"}},
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


def make_object(items: int) -> dict[str, Any]:
    containers = [
        {
            "name": f"worker-{i}",
            "image": f"registry.example.com/app:{i}.0",
            "cpu": 0.5,
            "ports": [{"containerPort": 8000 + i, "name": "http"}, {"containerPort": 9000 + i, "name": "metrics"}],
        }
        for i in range(items)
    ]
    labels = {f"team-{i}": f"value-{i}" for i in range(10)}
    return {"spec": {"replicas": 3, "maxReplicas": 5, "mode": "Safe", "labels": labels, "containers": containers}}


_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def by_hand(obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    """The same rules written directly in Python (no error texts beyond what a test needs)."""
    errors = []
    spec = obj["spec"]
    if spec["replicas"] > spec["maxReplicas"]:
        errors.append("spec: replicas")
    if old is not None and spec["mode"] != old["spec"]["mode"]:
        errors.append("spec: mode")
    if not all(len(c["name"]) <= 63 for c in spec["containers"]):
        errors.append("spec: names")
    if not all(len(k) < 64 and len(v) < 64 for k, v in spec["labels"].items()):
        errors.append("spec.labels")
    for i, c in enumerate(spec["containers"]):
        if not _NAME.search(c["name"]):
            errors.append(f"containers[{i}]: name")
        if not (":" in c["image"] and not c["image"].endswith(":latest")):
            errors.append(f"containers[{i}]: image")
        if "cpu" in c and not (0.0 < c["cpu"] <= 64.0):
            errors.append(f"containers[{i}]: cpu")
        for j, p in enumerate(c.get("ports", ())):
            if not 0 < p["containerPort"] < 65536:
                errors.append(f"containers[{i}].ports[{j}]")
    return errors


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--items", type=int, default=100, help="containers in the object (default 100)")
    args = parser.parse_args()
    schema = Schema.from_json(SCHEMA)
    validator = Validator(schema, is_resource_root=True)
    obj = make_object(args.items)
    old = copy.deepcopy(obj)
    old["spec"]["containers"][0]["image"] = "registry.example.com/app:old"
    assert not validator.validate(obj).errors and not validator.validate(obj, old).errors
    assert by_hand(obj, old) == []
    bad = copy.deepcopy(obj)
    bad["spec"]["containers"][7]["name"] = "Bad_Name"
    assert [str(e) for e in validator.validate(bad).errors] == ["spec.containers[7]: Invalid value: bad name"]

    rules = sum(1 for _ in validator.compiled())

    def build_cold() -> Validator:
        forget_compiled_rules()
        return Validator(schema, is_resource_root=True)

    timings = measure(
        {
            "python by hand, create": lambda: by_hand(obj, None),
            "kcel validate, create": lambda: validator.validate(obj),
            "kcel validate, update": lambda: validator.validate(obj, old),
            # The process-wide cache of compiled rules holds every rule after the first build: a later build only
            # walks the schema and looks its rules up. A cold build (a new process, a new CRD) compiles them all.
            "kcel build validator (rules cached)": lambda: Validator(schema, is_resource_root=True),
            "kcel build validator (cold: rules compiled)": build_cold,
        },
        repeat=args.repeat,
        warmup=args.warmup,
    )
    print(f"one object: {args.items} containers x 2 ports, 10 labels; {rules} rules; per validation")
    print(table(timings, unit="us"))
    if args.json:
        write_json(args.json, "crd_validate", timings, items=args.items, rules=rules)


if __name__ == "__main__":
    main()
