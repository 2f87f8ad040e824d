"""kcel lsp: how long after an edit the diagnostics of a large CRD are ready (the server's analysis of the new text),
for a 5,000-line CustomResourceDefinition with 200 rules; each round changes one rule (a different one each time)
and times the analysis the server runs before publishing. The first analysis of the file is timed separately."""

from __future__ import annotations

import time
from typing import Any

import yaml
from harness import arguments, measure, table, write_json

from kcel.lsp.analysis import analyze

RULES = 200


def big_crd() -> str:
    """200 object fields, each with a rule on its own name, count and tags, and enough schema to make 5,000 lines."""
    fields: dict[str, Any] = {}
    for i in range(RULES):
        fields[f"field{i}"] = {
            "type": "object", "description": f"The {i}th group of settings.",
            "properties": {
                "name": {"type": "string", "maxLength": 63, "description": "A DNS label."},
                "count": {"type": "integer", "minimum": 0, "maximum": 1000},
                "mode": {"type": "string", "enum": ["Fast", "Safe"]},
                "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20}},
            },
            "x-kubernetes-validations": [{
                "rule": f"self.count <= {i + 10} && self.name.startsWith('a') && self.tags.all(t, t.size() < 10)",
                "message": f"group {i} is out of bounds",
            }],
        }  # fmt: skip
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": fields}}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "bigs.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Big", "plural": "bigs", "singular": "big", "listKind": "BigList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}]},
    }  # fmt: skip
    return yaml.safe_dump(crd, sort_keys=False, width=200)


def main() -> None:
    args = arguments(__doc__).parse_args()
    text = big_crd()
    started = time.perf_counter()
    analyze(text, "1.37")
    first = time.perf_counter() - started
    edits = iter(range(10_000))

    def edit() -> None:
        i = next(edits) % RULES
        analyze(text.replace(f"self.count <= {i + 10} ", f"self.count <= {i + 11} ", 1), "1.37")

    timings = measure({"analysis after an edit": edit}, args.repeat, args.warmup)
    print(f"{text.count(chr(10)):,} lines, {RULES} rules; first analysis {first * 1000:.0f} ms")
    print(table(timings))
    if args.json:
        write_json(args.json, "lsp_latency", timings, first_seconds=first)


if __name__ == "__main__":
    main()
