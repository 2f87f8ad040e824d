"""Start-up of the `kcel` command: `kcel --version`, `kcel eval '1 + 1'` (aim: 150 ms) and `kcel check` of a one-rule
CRD (aim: 250 ms) in fresh processes with bytecode caches, next to a bare interpreter and, when installed,
`cel-python`'s own one-liner for scale."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness import arguments, measure, table, write_json

ROOT = Path(__file__).resolve().parents[1]


def command(*argv: str) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)

    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--kcel", metavar="PATH", help="the kcel command to time (default: this venv's), e.g. of a "
                        "venv with a plain `pip install .`, as users have it; its python is timed too")  # fmt: skip
    parser.add_argument("--against", metavar="PATH", help="another kcel command (an older commit's install) timed "
                        "in the same rounds, each case beside this one's")  # fmt: skip
    parser.set_defaults(repeat=21)
    args = parser.parse_args()
    kcel = args.kcel or shutil.which("kcel") or str(Path(sys.executable).with_name("kcel"))
    python = str(Path(kcel).with_name("python")) if args.kcel else sys.executable
    cases = {"python -c pass": command(python, "-c", "pass")}
    for label, path in (("kcel", kcel), ("against", args.against)):
        if path is not None:
            cases[f"{label} --version"] = command(path, "--version")
            cases[f"{label} eval '1 + 1'"] = command(path, "eval", "1 + 1")
            cases[f"{label} check (one-rule CRD)"] = command(path, "check", "examples/widget-crd.yaml")
    if importlib.util.find_spec("celpy") is not None:
        cases["celpy: import + 1 + 1"] = command(
            sys.executable, "-c", "import celpy; e = celpy.Environment(); e.program(e.compile('1 + 1')).evaluate({})"
        )
    timings = measure(cases, args.repeat, args.warmup)
    print(f"Wall time of a fresh process, {args.repeat} rounds:")
    print(table(timings, reference="kcel eval '1 + 1'", unit="ms"))
    if args.json:
        write_json(args.json, "startup", timings)


if __name__ == "__main__":
    main()
