"""`kcel check` over a folder of real CRDs (default ../shared/crds, 91 CRDs): wall time and peak memory of the
command with one worker per CPU and with one, and the slowest files checked one at a time in a warm process.

Run: PYTHONPATH=. .venv/bin/python bench/check_corpus.py [DIR] [--kcel PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURE = (
    "import resource, subprocess, sys, time; start = time.perf_counter(); "
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False); "
    "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def run(command: list[str]) -> tuple[float, int]:
    """Wall seconds and the peak RSS (KiB) of the largest process of one run."""
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, check=True)
    seconds, peak = done.stdout.split()
    return float(seconds), int(peak)


def slowest(folder: Path, count: int = 5) -> list[tuple[float, Path]]:
    """Each manifest file checked alone in this (warm) process, the slowest first."""
    from kcel.cli import main

    files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["check", "-j", "1", str(ROOT / "examples" / "widget-crd.yaml")])  # imports and caches warm
    times = []
    for path in files:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            start = time.perf_counter()
            main(["check", "-j", "1", str(path)])
            times.append((time.perf_counter() - start, path))
    return sorted(times, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT.parent / "shared" / "crds")
    parser.add_argument("--kcel", default=str(Path(sys.executable).with_name("kcel")), help="the kcel command")
    parser.add_argument("--against", help="another kcel command (an older commit's install), run in turn with it")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    print(f"kcel check {args.folder}: {cpus} CPUs, load {os.getloadavg()[0]:.2f}")
    commands = {"kcel": args.kcel, **({"against": args.against} if args.against else {})}
    for jobs in sorted({cpus, 1}, reverse=True):
        runs: dict[str, list[tuple[float, int]]] = {label: [] for label in commands}
        for _ in range(args.repeat):  # in turn, so that the machine's drift hits both alike
            for label, kcel in commands.items():
                runs[label].append(run([kcel, "check", "-j", str(jobs), str(args.folder)]))
        for label, measured in runs.items():
            ordered = sorted(measured)
            seconds = ordered[len(ordered) // 2][0]
            print(f"  {label} -j {jobs}: median {seconds:.2f} s of {args.repeat} (min {ordered[0][0]:.2f}), "
                  f"peak {max(p for _, p in measured) / 1024:.0f} MiB in the largest process")  # fmt: skip
    print("  slowest files, one at a time in a warm process:")
    for seconds, path in slowest(args.folder):
        print(f"    {seconds:.3f} s  {path.relative_to(args.folder)}")


if __name__ == "__main__":
    main()
