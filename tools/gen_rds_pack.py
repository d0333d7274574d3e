"""Generate the telemetry of the built-in `rds_postgres` pack, deterministically.

    .tools/bin/uv run --frozen --no-sync python tools/gen_rds_pack.py          # rewrite the files
    .tools/bin/uv run --frozen --no-sync python tools/gen_rds_pack.py --check  # exit 1 if they differ

The drill model is `rds_drill.py`; the scenarios are `rds_pack_scenarios.py` (and its `_axis2`, `_traps` parts).
"""

from __future__ import annotations

import sys

# The modules beside this file: the model, then the scenarios built on it.
from rds_drill import PACK, Drill
from rds_pack_scenarios import BASICS
from rds_pack_scenarios_axis2 import AXIS2
from rds_pack_scenarios_traps import TRAPS


def build() -> list[Drill]:
    """Every scenario of the pack, in folder order."""
    return [f() for f in (*BASICS, *TRAPS, *AXIS2)]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for drill in build():
        folder = PACK / drill.folder
        for name, content in drill.files().items():
            path = folder / name
            if check:
                if not path.is_file() or path.read_text(encoding="utf-8") != content:
                    stale.append(str(path.relative_to(PACK)))
            else:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
    if stale:
        print("out of date (run tools/gen_rds_pack.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
