"""Blind mode and lint on hostile alert sizes: 10 KB → 10 MB should cost ~10x per 10x (linear).

    python benchmarks/blind_scaling.py              # 10 KB, 100 KB, 1 MB, 10 MB
    python benchmarks/blind_scaling.py --max-mb 1   # stop at 1 MB
    python benchmarks/blind_scaling.py --quick      # up to 1 MB, best of 1
    python benchmarks/blind_scaling.py --baseline /tmp/old/src   # per-test cost against an older checkout

A copy of the built-in `001-replication-lag` gets an alert title and description of each size, shaped
against each pattern blinding used to backtrack on (long runs of letters and of spaces, and the scenario's
folder split in two around itself, so that each removal joins another copy). For each size: `load_pack`,
`blind_alert` and `lint_pack` in process (best of 3), and the ratio to the previous size.

First, the per-test cost: `blind_alert` on every built-in scenario (what each RCA test pays when it builds its
toolset), in a fresh process; with `--baseline SRC` also with `PYTHONPATH=SRC` (an older sredrill), the two
alternating round by round, with the ratio of each round. Nothing is asserted; docs/performance.md keeps the
figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):  # --baseline runs this file with an older src/ on PYTHONPATH
    sys.path.insert(0, str(ROOT / "src"))

from sredrill.scenarios import blind_alert, lint_pack, load_pack  # noqa: E402

BUILTIN = ROOT / "src" / "sredrill" / "scenarios" / "packs" / "rds_postgres"
FOLDER = "001-replication-lag"
SIZES = (10_000, 100_000, 1_000_000, 10_000_000)


def hostile_text(size: int) -> str:
    unit = "ReplicaLag above 600 seconds " + "a" * 4000 + " " * 4000 + "001-repli" * 50 + "cation-lag" * 50
    return (unit * (size // len(unit) + 1))[:size]


def make_pack(root: Path, size: int) -> Path:
    pack = root / f"hostile_{size}"
    pack.mkdir()
    shutil.copy(BUILTIN / "pack.yml", pack / "pack.yml")
    shutil.copytree(BUILTIN / FOLDER, pack / FOLDER)
    path = pack / FOLDER / "alert.json"
    alert = json.loads(path.read_text())
    alert["title"] = alert["commonAnnotations"]["description"] = hostile_text(size)
    path.write_text(json.dumps(alert))
    return pack


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def per_test_ms(calls: int) -> float:
    """Mean ms of one `blind_alert` over the built-in scenarios, `calls` times each."""
    pack = load_pack("rds_postgres")
    start = time.perf_counter()
    for _ in range(calls):
        for scenario in pack.scenarios:
            blind_alert(scenario, pack.vocabulary)
    return (time.perf_counter() - start) / (calls * len(pack.scenarios)) * 1000


def per_test(baseline: str | None, rounds: int) -> None:
    variants = {"this checkout": None, **({"baseline": baseline} if baseline else {})}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, src in variants.items():
            env = (
                {**os.environ, "PYTHONPATH": src} if src else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            )
            cmd = [sys.executable, __file__, "--measure-per-test"]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            times[name].append(float(done.stdout))
    print(f"blind_alert per test (every built-in scenario, {rounds} alternating rounds, fresh processes):")
    for name, values in times.items():
        print(f"  {name:<14} median {statistics.median(values):.3f} ms (min {min(values):.3f}, max {max(values):.3f})")
    if baseline:
        ratios = [b / a for a, b in zip(times["this checkout"], times["baseline"], strict=True)]
        print(f"  baseline ÷ this checkout per round: {', '.join(f'{v:.2f}' for v in ratios)}; "
              f"median {statistics.median(ratios):.2f}x")  # fmt: skip
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="up to 1 MB, best of 1")
    parser.add_argument("--baseline", metavar="SRC", help="also time blind_alert per test with this src/ folder")
    parser.add_argument("--measure-per-test", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_per_test:
        per_test_ms(20)  # warm up
        print(per_test_ms(200))
        return
    if args.quick:
        args.max_mb, args.repeat = min(args.max_mb, 1.0), 1
    per_test(args.baseline, 3 if args.quick else 5)
    sizes = [s for s in SIZES if s <= args.max_mb * 1_000_000]
    print(f"{'alert':>8}  {'load s':>8}  {'blind s':>8}  {'lint s':>8}  {'lint ratio':>10}")
    previous = None
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            pack_dir = make_pack(Path(tmp), size)
            load_s = best(functools.partial(load_pack, pack_dir), args.repeat)
            pack = load_pack(pack_dir)
            (scenario,) = pack.scenarios
            blind_s = best(functools.partial(blind_alert, scenario, pack.vocabulary), args.repeat)
            lint_s = best(functools.partial(lint_pack, pack), args.repeat)
            ratio = f"{lint_s / previous:.1f}x" if previous else "-"
            label = f"{size // 1000} KB" if size < 1_000_000 else f"{size // 1_000_000} MB"
            print(f"{label:>8}  {load_s:8.3f}  {blind_s:8.3f}  {lint_s:8.3f}  {ratio:>10}", flush=True)
            previous = lint_s


if __name__ == "__main__":
    main()
