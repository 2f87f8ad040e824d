"""Start-up of the `kcel` command: `kcel --version` and `kcel eval '1 + 1'` in fresh processes (aim: under 300 ms),
next to a bare interpreter and `cel-python`'s own one-liner for scale."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness import arguments, measure, table, write_json

ROOT = Path(__file__).resolve().parents[1]


def command(*argv: str) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)

    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.set_defaults(repeat=21)
    args = parser.parse_args()
    kcel = shutil.which("kcel") or str(Path(sys.executable).with_name("kcel"))
    cases = {
        "python -c pass": command(sys.executable, "-c", "pass"),
        "kcel --version": command(kcel, "--version"),
        "kcel eval '1 + 1'": command(kcel, "eval", "1 + 1"),
        "celpy: import + 1 + 1": command(
            sys.executable, "-c", "import celpy; e = celpy.Environment(); e.program(e.compile('1 + 1')).evaluate({})"
        ),
    }
    timings = measure(cases, args.repeat, args.warmup)
    print(f"Wall time of a fresh process, {args.repeat} rounds:")
    print(table(timings, reference="kcel eval '1 + 1'", unit="ms"))
    if args.json:
        write_json(args.json, "startup", timings)


if __name__ == "__main__":
    main()
