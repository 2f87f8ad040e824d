"""`kcel test` on a suite of 1,000 CRD cases, side by side with `kcel validate` on the same 1,000 objects.

The corpus is validate_corpus.py's: a CRD with 13 rules at four schema levels plus schema checks (enum, pattern,
bounds, defaults, a map list and a set list), and 1,000 Widget manifests, one per file, every tenth one breaking
a rule on the spec and one on a container. Two suites run over it:

* files: 1,000 cases `object: objects/w-NNNN.json` (the very files `kcel validate` reads), each with its
  expectation: `valid`, or the texts of its two errors;
* inline: one `base` object and 1,000 cases that each give a merge patch (how suites are usually written; the
  objects have the same shape, every tenth one with too many replicas).

Two tables, cases timed round-robin:

* in process: `kcel validate`'s work (`Catalog.load` + `validate_files`) against `kcel test`'s (read the suite,
  load its CRD, run and check every case);
* end to end: `kcel validate --crd crd.json objects/` and `kcel test SUITE` as fresh processes, what a CI
  step pays (interpreter start-up, imports and compiling the CRD's rules included).

Run: PYTHONPATH=. .venv/bin/python bench/suites.py [--objects N] [--repeat N]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import arguments, measure, table, write_json
from validate_corpus import widget, write_corpus

from kcel.k8s.crds.validate import Catalog, validate_files
from kcel.k8s.manifests.files import manifest_files
from kcel.suites.loading import load_suites
from kcel.suites.runner import PASSED, prepare, run

ERRORS = ["replicas must not exceed maxReplicas", "images must be pinned"]


def file_suite(folder: Path, count: int) -> Path:
    cases = [
        {"name": f"w-{i:04}", "object": f"objects/w-{i:04}.json",
         "expect": {"errors": ERRORS} if i % 10 == 9 else "valid"}
        for i in range(count)
    ]  # fmt: skip
    return _write(folder / "files.kcel-test.yaml", {"crds": "crd.json", "cases": cases})


def inline_suite(folder: Path, count: int) -> Path:
    cases = [
        {"name": f"w-{i:04}", "patch": {"metadata": {"name": f"w-{i:04}"}, "spec": {"replicas": 7 if i % 10 == 9
                                                                                        else i % 4}},
         "expect": {"errors": ERRORS[0]} if i % 10 == 9 else "valid"}
        for i in range(count)
    ]  # fmt: skip
    return _write(folder / "inline.kcel-test.yaml", {"crds": "crd.json", "base": widget(0), "cases": cases})


def _write(path: Path, suite: dict[str, Any]) -> Path:
    path.write_text(json.dumps(suite, indent=1))  # JSON is YAML: the suite reads the same, and writes fast
    return path


def kcel_test(suite: Path) -> int:
    """What `kcel test SUITE` does in process; returns the number of cases that passed."""
    suites, problems = load_suites([suite])
    plans, more, _ = prepare(suites, lambda suite, case: True)
    assert not problems and not more, problems + more
    return sum(result.status == PASSED for result in run(plans))


def kcel_validate(crd: Path, objects: Path) -> int:
    """What `kcel validate --crd CRD OBJECTS` does in process; returns the number of reports."""
    catalog = Catalog.load([crd])
    return len(list(validate_files(manifest_files([objects]), catalog)))


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kcel.cli", *args], capture_output=True, text=True)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--objects", type=int, default=1000, help="objects and cases per suite (default 1000)")
    parser.set_defaults(repeat=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        crd, objects = write_corpus(folder, args.objects)
        files, inline = file_suite(folder, args.objects), inline_suite(folder, args.objects)
        assert kcel_test(files) == kcel_test(inline) == kcel_validate(crd, objects) == args.objects
        for suite in (files, inline):
            done = command("test", str(suite))
            assert done.returncode == 0 and done.stdout == f"{args.objects} passed, 0 failed\n", done
        assert command("validate", "--crd", str(crd), str(objects)).returncode == 1  # every tenth is invalid

        in_process = measure(
            {
                "kcel validate (1,000 files)": lambda: kcel_validate(crd, objects),
                "kcel test, cases naming the files": lambda: kcel_test(files),
                "kcel test, inline patches": lambda: kcel_test(inline),
            },
            repeat=args.repeat,
            warmup=args.warmup,
        )
        end_to_end = measure(
            {
                "$ kcel validate --crd crd.json objects/": lambda: command("validate", "--crd", str(crd), str(objects)),
                "$ kcel test files.kcel-test.yaml": lambda: command("test", str(files)),
                "$ kcel test inline.kcel-test.yaml": lambda: command("test", str(inline)),
            },
            repeat=args.repeat,
            warmup=args.warmup,
        )
    print(f"{args.objects} objects and cases, every tenth invalid; one sample = all of them")
    print("\nin process")
    print(table(in_process, unit="ms"))
    print(table(in_process, unit="us", per=args.objects).split("\n(")[0].replace("median", "per case"))
    print("\nend to end (fresh processes)")
    print(table(end_to_end, unit="s"))
    if args.json:
        write_json(args.json, "suites", [*in_process, *end_to_end], objects=args.objects)


if __name__ == "__main__":
    main()
