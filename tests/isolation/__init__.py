"""Tests of `sredrill.isolation`. Sandbox tests skip, loudly, where bubblewrap does not work, unless
`SREDRILL_REQUIRE_SANDBOX=1` (`.ci/run`): then they fail."""

from __future__ import annotations

import os

import pytest

from sredrill.isolation import sandbox_problem


def require_sandbox() -> None:
    """Skip the calling test where bubblewrap does not work here; fail it instead under SREDRILL_REQUIRE_SANDBOX=1."""
    problem = sandbox_problem()
    if problem is None:
        return
    if os.environ.get("SREDRILL_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"SREDRILL_REQUIRE_SANDBOX=1 but the sandbox does not work here: {problem}")
    pytest.skip(f"SANDBOX TEST SKIPPED: {problem} (set SREDRILL_REQUIRE_SANDBOX=1 to make this a failure)")
