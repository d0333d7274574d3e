"""The reference agent reads the PostgreSQL log: it searches it once per round, cites what the log confirms, and
lets refused connections decide connection exhaustion when the connection count is missing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sredrill.agents.reference.casefile import CaseFile
from sredrill.agents.reference.dblog import SEARCH_PATTERN, SIGNATURES
from sredrill.agents.reference.observations import LogLine, parse_alert, parse_logs, parse_series
from sredrill.agents.reference.reasoning import conclude, open_case
from sredrill.agents.reference.writing import write_diagnosis
from sredrill.diagnosis import Diagnosis
from sredrill.domains.rds.tools import log_matcher
from sredrill.scenarios import load_pack
from tests.agents.test_reference_agent import Run, run_pack

LOG = "aws_rds_postgresql_log"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return run_pack(load_pack("rds_postgres"))


def _log_claims(run: Run) -> list[str]:
    """The claims citing a log record (an item the log served)."""
    served = run.toolset.served_items()
    return [c.text for c in run.diagnosis.claims if any(served[x.item].source == LOG for x in c.citations)]


def test_it_searches_the_log_with_one_safe_pattern_on_both_axes(runs: list[Run]) -> None:
    log_matcher(SEARCH_PATTERN, True)  # the tool accepts it: no nested quantifier, short enough
    for r in runs:
        calls = [c for c in r.trajectory.tool_calls(verified=True) if c.name == "search_logs"]
        assert len(calls) == 1 and calls[0].args["pattern"] == SEARCH_PATTERN, r.scenario.folder
        assert LOG in r.toolset.sources_queried(), r.scenario.folder


def test_it_cites_the_log_where_the_log_confirms_a_root_cause(runs: list[Run]) -> None:
    for r in runs:
        log = r.scenario.postgresql_log
        assert log is not None
        shown = {mode for mode, p in SIGNATURES.items() if any(p.search(rec.message) for rec in log.records)}
        confirmed = shown & set(r.diagnosis.failure_modes)
        claims = _log_claims(r)
        if confirmed:
            assert claims, (r.scenario.folder, r.mode)
        else:  # a log that shows nothing the diagnosis names is not cited: routine lines are no evidence
            assert not claims, (r.scenario.folder, r.mode, claims)


def test_healthy_and_trap_scenarios_get_no_log_claim(runs: list[Run]) -> None:
    for r in runs:
        if r.scenario.answer.root_cause_category == "healthy":
            assert not _log_claims(r), r.scenario.folder


def _diagnose(logs: list[LogLine]) -> Diagnosis:
    stamps = [(T0 + timedelta(minutes=i)).isoformat() for i in range(15)]
    cpu = {"metric_name": "CPUUtilization", "stat": "Average", "unit": "Percent", "dimensions": {},
           "timestamps": stamps, "values": [22.0] * 15}  # fmt: skip
    parsed = parse_series({"series": [cpu]})
    file = CaseFile.build(
        alert=parse_alert({"title": "checkout errors", "state": "alerting"}),
        listed=["CPUUtilization"],
        period_s=60,
        window=None,
        series=parsed,
        events=[],
        insights=None,
        read=frozenset({"aws_cloudwatch_metrics", LOG}),
        logs=logs,
    )
    return write_diagnosis(conclude(open_case(file)))


def _refusals(n: int) -> list[LogLine]:
    result = {
        "records": [
            {
                "timestamp": (T0 + timedelta(minutes=5 + i)).isoformat(),
                "level": "FATAL",
                "message": "sorry, too many clients already",
            }
            for i in range(n)
        ]
    }
    return parse_logs(result)


def test_refused_connections_decide_when_the_connection_count_is_missing() -> None:
    decided = _diagnose(_refusals(4))
    assert decided.failure_modes == ["connection_exhaustion"]
    assert any(LOG in c.evidence and "refused" in c.text for c in decided.claims)
    # The same evidence without the log (or with one refusal, a blip) does not conclude it.
    assert "connection_exhaustion" not in _diagnose([]).failure_modes
    assert "connection_exhaustion" not in _diagnose(_refusals(1)).failure_modes
