"""The fuzz suite (issue: hardening): hypothesis with fixed seeds, bounded so `make test` stays fast.

Every test here uses the `ci` profile: derandomized (the same examples on every run, so CI is reproducible)
and a small example budget. `SREDRILL_FUZZ_EXAMPLES=N` raises the budget for a longer local hunt.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz",
    derandomize=True,
    max_examples=int(os.environ.get("SREDRILL_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,
)
FUZZ = settings.get_profile("fuzz")
