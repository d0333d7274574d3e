"""Blind mode and lint on hostile alert sizes: 10 KB → 10 MB should cost ~10x per 10x (linear).

    python benchmarks/blind_scaling.py              # 10 KB, 100 KB, 1 MB, 10 MB
    python benchmarks/blind_scaling.py --max-mb 1   # stop at 1 MB

A copy of the built-in `001-replication-lag` gets an alert title and description of each size, shaped
against each pattern blinding used to backtrack on (long runs of letters and of spaces, and the scenario's
folder split in two around itself, so that each removal joins another copy). For each size: `load_pack`,
`blind_alert` and `lint_pack` in process (best of 3), and the ratio to the previous size. Nothing is
asserted; docs/performance.md keeps the figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
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
