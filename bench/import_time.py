"""Cost of start-up in fresh interpreters, net of bare start-up: `import kcel` alone (lazy: it loads nothing yet),
then the time until each engine can parse (lark grammar cache warm and cold) and until it has evaluated its first
expression, beside cel-python doing the same.

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
    # `import kcel` is lazy (the parser, checker and libraries load on first use): on its own it says nothing about
    # readiness, so it is not compared with anything.
    "import kcel (lazy)": "import kcel",
    # Ready to parse: the first parse loads kcel's front end; celpy builds its Lark parser on the first CELParser().
    "kcel: import + parse '1 + 1' (lark cache warm)": "import kcel; kcel.parse('1 + 1')",
    "kcel: import + parse '1 + 1' (lark cache cold)": "import kcel; kcel.parse('1 + 1')",
    "celpy: import + parse '1 + 1'": "import celpy.celparser; celpy.celparser.CELParser().parse('1 + 1')",
    # Ready to answer: environment, compile (check, plan) and one evaluation.
    "kcel: import + first evaluation (lark cache warm)": "import kcel; kcel.Env().compile('1 + 1').evaluate({})",
    "celpy: import + first evaluation": (
        "import celpy; e = celpy.Environment(); e.program(e.compile('1 + 1')).evaluate({})"
    ),
}
CELPY_PARSE = "celpy: import + parse '1 + 1'"
PAIRS = {  # kcel's case -> cel-python's doing the same
    "kcel: import + parse '1 + 1' (lark cache warm)": CELPY_PARSE,
    "kcel: import + parse '1 + 1' (lark cache cold)": CELPY_PARSE,
    "kcel: import + first evaluation (lark cache warm)": "celpy: import + first evaluation",
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
            name = f"kcel from {args.compare}: import + parse '1 + 1' (lark cache {cache})"
            snippets[name] = ("import kcel; kcel.parse('1 + 1')", args.compare.resolve())
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
    compared = f"kcel from {args.compare}: import + parse '1 + 1' (lark cache warm)"
    reference = compared if args.compare else CELPY_PARSE
    print(table(net, reference=reference, unit="ms"))
    by_name = {t.name: t for t in timings}
    if all(name in by_name for pair in PAIRS.items() for name in pair):
        print("\nkcel / cel-python, net of start-up, like for like:")
        for mine, theirs in PAIRS.items():
            ratio = by_name[mine].minus(base).median / by_name[theirs].minus(base).median
            print(f"  {mine}: {ratio:.2f}x")
    if args.json:
        write_json(args.json, "import_time", [*timings, *(t.minus(base, f"net: {t.name}") for t in timings[1:])])


if __name__ == "__main__":
    main()
