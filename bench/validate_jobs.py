"""`kcel validate` on a directory of 10,000 manifests, one worker process against one per CPU, end to end.

Each round runs the command in a fresh process (interpreter start, CRD loading, every file, the report), the
variants round-robin; the speed-up is the median of `-j 1` over the median of `-j N`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from harness import arguments, measure, table, write_json

ROOT = Path(__file__).resolve().parents[1]
CRD = ROOT / "examples" / "widget-crd.yaml"


def manifests(folder: Path, count: int) -> None:
    widget = yaml.safe_load((ROOT / "examples" / "widget.yaml").read_text())
    widget["spec"]["containers"] = widget["spec"]["containers"][:1]
    for i in range(count):
        widget["metadata"]["name"] = f"w{i}"
        widget["spec"]["replicas"] = 5 if i % 10 == 0 else 2  # one in ten invalid
        (folder / f"w{i:05}.yaml").write_text(yaml.safe_dump(widget), encoding="utf-8")


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.set_defaults(repeat=5, warmup=1)
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        manifests(Path(folder), args.files)
        command = [sys.executable, "-m", "kcel.cli", "validate", "--crd", str(CRD), folder, "-o", "json"]

        def run(jobs: int) -> None:
            done = subprocess.run([*command, "-j", str(jobs)], capture_output=True, check=False)
            assert done.returncode == 1 and done.stdout.count(b'"valid": false') == args.files // 10, done.stderr

        timings = measure({"-j 1": lambda: run(1), f"-j {cpus}": lambda: run(cpus)}, args.repeat, args.warmup)
    print(f"kcel validate, {args.files:,} manifests, {cpus} CPUs")
    print(table(timings, reference="-j 1", unit="s"))
    print(f"speed-up: {timings[0].median / timings[1].median:.2f}x")
    if args.json:
        write_json(args.json, "validate_jobs", timings, files=args.files, cpus=cpus)


if __name__ == "__main__":
    main()
