"""`python -m conformance cel-spec|k8s-cases|crds [DIR]`: run a suite, print a line per file and the totals; exit 1
when a case fails, 2 when there is no suite directory."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from conformance import celspec, crds, k8scases
from conformance.outcome import Outcome, SkipList

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
SUITES = {
    "cel-spec": (SHARED / "conformance" / "cel-spec", HERE / "celspec_skips.txt"),
    "k8s-cases": (SHARED / "k8s-cases", HERE / "k8scases_skips.txt"),
    "crds": (SHARED / "crds", HERE / "crds_skips.txt"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("directory", nargs="?", type=Path, help="suite directory (default: ../shared/...)")
    parser.add_argument("--stage", choices=celspec.STAGES, default="eval", help="cel-spec: how far to run each case")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write one record per case to FILE")
    parser.add_argument("--verbose", "-v", action="store_true", help="also print every case that passed")
    args = parser.parse_args(argv)

    default_dir, skip_file = SUITES[args.suite]
    directory = args.directory or default_dir
    if not directory.is_dir():
        print(f"error: no suite directory at {directory}", file=sys.stderr)
        return 2
    skips = SkipList.read(skip_file)
    outcomes: dict[str, list[Outcome]] = defaultdict(list)
    if args.suite == "cel-spec":
        for case in celspec.load(directory):
            outcomes[case.file].append(celspec.run(case, args.stage, skips))
    elif args.suite == "crds":
        outcomes.update(crds.run_directory(directory, skips))
    else:
        for k8s_case in k8scases.load(directory):
            outcomes[k8s_case.file].append(k8scases.run(k8s_case, skips))

    totals: Counter[str] = Counter()
    for file, results in outcomes.items():
        counts = Counter(o.status for o in results)
        totals.update(counts)
        print(f"{file}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
        for o in results:  # every failure and every skip (the skip list's or the runner's) with its reason
            if o.status != "passed":
                print(f"  {o.status.upper()} {o.id}: {o.reason}")
            elif args.verbose:
                print(f"  PASSED {o.id}")
    if args.json:
        records = [o.__dict__ for results in outcomes.values() for o in results]
        args.json.write_text(json.dumps(records, indent=1), encoding="utf-8")
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 1 if totals["failed"] else 0  # a CI job running the suite fails with it


if __name__ == "__main__":
    sys.exit(main())
