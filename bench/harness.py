"""Tiny timing helper: run cases round-robin, report median and IQR side by side with ratios to a reference."""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@dataclass(frozen=True, slots=True)
class Timing:
    """The samples of one case, in nanoseconds, in round order (so two cases can be paired round by round)."""

    name: str
    samples_ns: tuple[int, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ns)

    @property
    def iqr(self) -> float:
        if len(self.samples_ns) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_ns, n=4, method="inclusive")
        return q3 - q1

    def minus(self, other: Timing, name: str | None = None) -> Timing:
        """Pairwise difference per round, e.g. an import run minus the bare-interpreter run of the same round."""
        pairs = zip(self.samples_ns, other.samples_ns, strict=True)
        return Timing(name or self.name, tuple(a - b for a, b in pairs))


def measure(cases: Mapping[str, Callable[[], object]], repeat: int = 7, warmup: int = 1) -> list[Timing]:
    """Time each case once per round, round-robin, so drift (CPU clock, other load) hits every case alike."""
    for _ in range(warmup):
        for fn in cases.values():
            fn()
    samples: dict[str, list[int]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            gc.collect()  # start each sample from the same heap state, not from the previous case's garbage
            start = time.perf_counter_ns()
            fn()
            samples[name].append(time.perf_counter_ns() - start)
    return [Timing(name, tuple(values)) for name, values in samples.items()]


def table(timings: Sequence[Timing], reference: str | None = None, unit: str = "ms", per: int = 1) -> str:
    """Render median, IQR and median ratio to `reference` (default: the first case); `per` divides both."""
    ref = next(t for t in timings if t.name == (reference or timings[0].name))
    scale = UNITS[unit] * per
    width = max(len(t.name) for t in timings)
    lines = [f"{'case':<{width}}  {'median':>11}  {'IQR':>11}  {'ratio':>7}  n"]
    for t in timings:
        ratio = t.median / ref.median if ref.median else float("nan")
        lines.append(
            f"{t.name:<{width}}  {t.median / scale:>8.3f} {unit:<2}  {t.iqr / scale:>8.3f} {unit:<2}"
            f"  {ratio:>6.2f}x  {len(t.samples_ns)}"
        )
    lines.append(f"(ratio = median / median of {ref.name!r}; IQR = interquartile range of the samples)")
    return "\n".join(lines)


def arguments(description: str) -> argparse.ArgumentParser:
    """The options every benchmark script shares; scripts may add their own before calling parse_args()."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per case (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the raw samples as JSON")
    return parser


def write_json(path: Path, benchmark: str, timings: Sequence[Timing], **meta: object) -> None:
    """Keep raw samples, not just medians, so later runs can be compared with the same statistics."""
    data = {
        "benchmark": benchmark,
        "python": sys.version,
        "platform": platform.platform(),
        "meta": meta,
        "cases": [
            {"name": t.name, "median_ns": t.median, "iqr_ns": t.iqr, "samples_ns": t.samples_ns} for t in timings
        ],
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# --- per-call timing: samples of many calls each ------------------------------------------------------------------


def loop(call: Callable[[Any], object], activation: Any, loops: int) -> Callable[[], None]:
    """One sample: `loops` calls in a plain for loop (a few tens of ns each on top of the call, for every engine)."""
    rounds = range(loops)

    def run() -> None:
        for _ in rounds:
            call(activation)

    return run


def calibrate(call: Callable[[Any], object], activation: Any, target_ns: int) -> int:
    """How many calls make one sample last about `target_ns` (timeit's autorange, then scaled)."""
    loops = 1
    while True:
        start = time.perf_counter_ns()
        loop(call, activation, loops)()
        elapsed = time.perf_counter_ns() - start
        if elapsed >= target_ns // 5 or loops >= 1_000_000:
            return max(1, round(loops * target_ns / max(elapsed, 1)))
        loops *= 10 if elapsed < target_ns // 50 else 2
