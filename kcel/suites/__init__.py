"""`kcel test`: suites of cases for CRD rules, admission policies and the other places Kubernetes runs CEL (webhook
match conditions, DRA device selectors, structured authentication and authorization), run as Kubernetes would
answer them.

A suite file (`*.kcel-test.yaml`) is read into `kcel.suites.model.Suite`s (`kcel.suites.loading`), each suite is
prepared once per Kubernetes version (its CRDs loaded, its policies or configurations compiled) and every case is
run and checked (`kcel.suites.runner`, with `crd_cases`, `admission_cases` and `surface_cases`);
`kcel.suites.reports` prints the results as text, JSON or JUnit XML, and `kcel.suites.update` writes answers back
as expectations. `SCHEMA` is the JSON Schema of the format.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """`SCHEMA`: the JSON Schema of a suite document (draft-07), for editors and CI: `json.loads(SCHEMA.read_text())`.
    Found on first use, so that building the `kcel` command line does not import importlib.resources."""
    if name == "SCHEMA":
        from importlib.resources import files

        return files(__name__) / "schema.json"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
