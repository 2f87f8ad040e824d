"""Cost of `import kcel` in fresh interpreters, lark grammar cache warm and cold, net of bare start-up.

`--compare DIR` also times `import kcel` from another checkout (a worktree of an earlier commit, say) in the same
rounds, so a change's effect on import time is a side-by-side ratio.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness import arguments, measure, table, write_json

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "python -c pass"
SNIPPETS = {
    BASELINE: "pass",
    "import lark": "import lark",
    "import kcel (lark cache warm)": "import kcel",
    "import kcel (lark cache cold)": "import kcel",
    # celpy builds its Lark parser on first CELParser(), not on import; count both to compare ready-to-parse costs.
    "import celpy + CELParser()": "import celpy.celparser; celpy.celparser.CELParser()",
}


def runner(code: str, tmpdir: Path, cold: bool, root: Path = ROOT) -> Callable[[], None]:
    """Run `code` in a new interpreter whose TMPDIR (where lark's cache=True file lives) is private to this case;
    `root` comes first on the path, so its `kcel` is the one imported."""
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", code]

    def run() -> None:
        subprocess.run(command, env=env, check=True)
        if cold:  # drop the cache file lark just wrote (microseconds, next to a ~100 ms run) so every run is cold
            for entry in tmpdir.iterdir():
                entry.unlink()

    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--compare", type=Path, metavar="DIR", help="also import kcel from this checkout")
    parser.set_defaults(repeat=21)
    args = parser.parse_args()

    snippets = {name: (code, ROOT) for name, code in SNIPPETS.items()}
    if args.compare:
        for cache in ("warm", "cold"):
            snippets[f"import kcel from {args.compare} (lark cache {cache})"] = ("import kcel", args.compare.resolve())
    with tempfile.TemporaryDirectory(prefix="kcel-bench-") as scratch:
        cases = {}
        for i, (name, (code, root)) in enumerate(snippets.items()):
            tmpdir = Path(scratch, str(i))
            tmpdir.mkdir()
            cases[name] = runner(code, tmpdir, cold="cold" in name, root=root)
        timings = measure(cases, args.repeat, args.warmup)  # the warm-up run also fills the warm case's cache
        cached = sorted(p.name for p in Path(scratch).glob("*/.lark_*"))

    print(f"Wall time of a fresh `{Path(sys.executable).name} -c ...`, {args.repeat} rounds (cache files: {cached}):")
    print(table(timings, reference=BASELINE, unit="ms"))
    base = timings[0]
    net = [t.minus(base) for t in timings[1:]]  # paired per round, so drift between rounds cancels
    print(f"\nNet of `{BASELINE}` (per-round difference, then median):")
    reference = f"import kcel from {args.compare} (lark cache warm)" if args.compare else "import celpy + CELParser()"
    print(table(net, reference=reference, unit="ms"))
    if args.json:
        write_json(args.json, "import_time", [*timings, *(t.minus(base, f"net: {t.name}") for t in timings[1:])])


if __name__ == "__main__":
    main()
