"""Schemathesis against the live server's `/openapi.json`: every documented operation, generated requests.

The server runs on a loopback port (a real uvicorn) and schemathesis reads the schema it serves, then sends
requests that fit it and requests that do not. Checked on every answer: no 5xx, and every 4xx of sredrill's
own routes carries `detail`. Bounded and deterministic (`derandomize`, a fixed example count) so `make test`
stays fast; `SREDRILL_FUZZ_EXAMPLES=N` raises the count for a longer hunt. The routes that start or cancel
runs are left out (a run would outlive its example); the others carry the runs API's token.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from sredrill.server import ServerThread, create_app

EXAMPLES = int(os.environ.get("SREDRILL_FUZZ_EXAMPLES", "12"))


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db: Path = tmp_path_factory.mktemp("schemathesis") / "runs.db"
    return create_app(packs=(), db=db)


@pytest.fixture(scope="module")
def server(app: Any) -> Iterator[ServerThread]:
    with ServerThread(app) as running:
        yield running


STARTS_RUNS = {("POST", "/api/runs"), ("POST", "/api/runs/{run_id}/cancel")}
"""Left out: a run started by an example would outlive it (and cancel needs one)."""


def operations(server: ServerThread) -> list[Any]:
    """The operations of the schema the live server serves, less those that start runs."""
    api = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    found = []
    for result in api.get_all_operations():
        operation = result.ok()  # an invalid schema raises here, naming the operation
        if (operation.method.upper(), operation.path) not in STARTS_RUNS:
            found.append(operation)
    return found


def check(case: Any, app: Any, server: ServerThread) -> None:
    headers = {"Authorization": f"Bearer {app.state.options.runs_token}"}
    response = case.call(base_url=server.url, headers=headers, timeout=30)
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text[:500]}"
    is_json = "application/json" in str(response.headers.get("content-type"))
    if 400 <= response.status_code < 500 and is_json:
        body = response.json()
        if case.path.startswith("/runs/"):  # the agents' tool routes: DESIGN §4.1's error shape
            assert body["error"]["message"], body
        else:
            assert body["detail"], (case.method, case.formatted_path, body)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_answers_5xx_and_every_4xx_says_why(app: Any, server: ServerThread, mode: GenerationMode) -> None:
    found = operations(server)
    assert {(o.method.upper(), o.path) for o in found} >= {("POST", "/reset"), ("POST", "/step"), ("GET", "/api/runs")}
    failures = []
    for operation in found:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def probe(case: Any) -> None:
            check(case, app, server)

        try:
            probe()
        except Unsatisfiable:
            continue  # nothing can be out of schema for an operation without parameters or body
        except AssertionError as exc:
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert not failures, "\n".join(failures)
