"""The RDS domain's PostgreSQL log: its loader, `search_logs` (filters, limit, bad patterns, window, backends),
lint's leak and window rules, and its evidence view. Real packs on disk, loaded by the real loader."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from sredrill.domains.rds import DOMAIN as RDS
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import item_id
from sredrill.scenarios import Scenario, Severity, lint_pack, load_pack
from sredrill.server.ui.evidence import evidence_html
from sredrill.trajectory import ToolError
from tests.support.scenario_builder import INSTANCE, T0, answer, build_pack, only, scenario_yml, write_scenario, z

LOG = "aws_rds_postgresql_log.json"
FOLDER = "001-slots"
WITH_LOG = [*scenario_yml(FOLDER)["available_evidence"], "aws_rds_postgresql_log"]  # type: ignore[misc]


def record(minute: float, message: str, level: str = "LOG", **over: object) -> dict[str, object]:
    return {"timestamp": z(T0 + timedelta(minutes=minute)), "level": level, "message": message, "pid": 4242, **over}


def log_file(*records: dict[str, object], **over: object) -> dict[str, object]:
    return {"db_instance_identifier": INSTANCE, "log_file": "error/postgresql.log.2024-05-01-10",
            "records": list(records), **over}  # fmt: skip


HAYSTACK = log_file(
    record(0.5, "connection authorized: user=orders_api database=orders", user="orders_api", database="orders"),
    record(1.0, "checkpoint starting: time"),
    record(3.0, "sorry, too many clients already", "FATAL", user="orders_api"),
    record(4.0, 'automatic vacuum of table "orders.public.orders": index scans: 1'),
    record(5.0, "remaining connection slots are reserved for roles with the SUPERUSER attribute", "FATAL"),
    record(6.0, "checkpoint complete: wrote 1843 buffers (1.4%)"),
    record(7.0, "sorry, too many clients already", "FATAL"),
)


def with_log(tmp_path: Path, log: object = HAYSTACK, **files: object) -> Scenario:
    return only(
        build_pack(
            tmp_path / "drill",
            {FOLDER: {"scenario.yml": scenario_yml(FOLDER, available_evidence=WITH_LOG), LOG: log, **files}},
        )
    )


async def search(scenario: Scenario, mode: BackendMode = BackendMode.SELECTIVE, **args: Any) -> dict[str, Any]:
    result = await RcaToolset(scenario, mode).call("search_logs", args)
    assert isinstance(result, dict)
    return result


# -- the loader -------------------------------------------------------------------------------------------


def test_the_log_loads_as_records_of_the_source(tmp_path: Path) -> None:
    s = with_log(tmp_path)
    assert s.has_source("aws_rds_postgresql_log") and s.files[LOG] == f"drill/{FOLDER}/{LOG}"
    log = s.postgresql_log
    assert log is not None and [r.level for r in log.records][:3] == ["LOG", "LOG", "FATAL"]
    assert log.records[0].user == "orders_api" and log.records[0].pid == 4242


def test_a_scenario_without_the_log_has_none(tmp_path: Path) -> None:
    s = only(build_pack(tmp_path / "drill", {FOLDER: {}}))
    assert s.postgresql_log is None and not s.has_source("aws_rds_postgresql_log")


@pytest.mark.parametrize(
    ("log", "field", "says"),
    [
        (log_file(record(0, "x", "SHOUT")), "records[0].level", "'SHOUT' is not a PostgreSQL log level"),
        (log_file(record(2, "late"), record(1, "early")), "records", "sort the records by timestamp"),
        (log_file(record(0, "")), "records[0].message", "at least 1 character"),
        ({"records": []}, "db_instance_identifier", "required"),
        (log_file({"level": "LOG", "message": "no time"}), "records[0].timestamp", "required"),
    ],
)
def test_a_malformed_log_is_an_error_naming_file_field_and_fix(
    tmp_path: Path, log: object, field: str, says: str
) -> None:
    write_scenario(tmp_path / "drill", FOLDER, {"scenario.yml": scenario_yml(FOLDER, available_evidence=WITH_LOG),
                                                LOG: log})  # fmt: skip
    pack = load_pack(tmp_path / "drill")
    (error,) = pack.errors
    assert error.path == f"drill/{FOLDER}/{LOG}" and (error.field or "").startswith(field.split("[")[0])
    assert says in str(error), str(error)


def test_a_listed_log_that_is_missing_names_the_file_and_available_evidence(tmp_path: Path) -> None:
    write_scenario(tmp_path / "drill", FOLDER, {"scenario.yml": scenario_yml(FOLDER, available_evidence=WITH_LOG)})
    (error,) = load_pack(tmp_path / "drill").errors
    assert error.path == f"drill/{FOLDER}/{LOG}"
    assert "aws_rds_postgresql_log" in str(error) and "available_evidence" in str(error)


def test_the_log_file_alone_makes_a_folder_rds(tmp_path: Path) -> None:
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / LOG).write_text("{}", encoding="utf-8")
    assert RDS.recognises(folder)


# -- search_logs ------------------------------------------------------------------------------------------


async def test_a_substring_search_returns_matching_records_oldest_first(tmp_path: Path) -> None:
    out = await search(with_log(tmp_path), pattern="TOO MANY clients")
    assert [r["message"] for r in out["records"]] == ["sorry, too many clients already"] * 2
    assert out["matched"] == out["returned"] == 2 and out["truncated"] is False and "note" not in out
    first = out["records"][0]
    when, message = z(T0 + timedelta(minutes=3)), "sorry, too many clients already"
    assert first == {"id": item_id("log", {"time": when, "text": message}), "timestamp": when, "level": "FATAL",
                     "pid": 4242, "user": "orders_api", "database": "", "client": "", "message": message}  # fmt: skip
    assert out["records"][1]["id"] != first["id"]  # the same message at another time is another record
    assert out["log_file"] == "error/postgresql.log.2024-05-01-10"


async def test_a_regex_search_and_the_level_filter(tmp_path: Path) -> None:
    s = with_log(tmp_path)
    out = await search(s, pattern=r"too many clients|connection slots", regex=True)
    assert out["matched"] == 3
    # A plain-text pattern is not a regex: `|` is a character there.
    assert (await search(s, pattern="too many clients|connection slots"))["matched"] == 0
    fatal = await search(s, level=["FATAL"])
    assert fatal["matched"] == 3 and {r["level"] for r in fatal["records"]} == {"FATAL"}
    assert (await search(s, level=["ERROR", "PANIC"]))["matched"] == 0


async def test_the_time_range_is_start_inclusive_end_exclusive(tmp_path: Path) -> None:
    s = with_log(tmp_path)
    out = await search(s, start=z(T0 + timedelta(minutes=3)), end=z(T0 + timedelta(minutes=5)))
    assert [r["timestamp"] for r in out["records"]] == [z(T0 + timedelta(minutes=m)) for m in (3, 4)]
    outside = await search(s, start=z(T0 + timedelta(hours=2)))
    assert outside["matched"] == 0 and "the log runs from" in outside["note"]


async def test_the_limit_caps_the_answer_and_says_so(tmp_path: Path) -> None:
    out = await search(with_log(tmp_path), limit=2)
    assert out["returned"] == 2 and out["matched"] == 7 and out["truncated"] is True
    assert "5 more matching records after" in out["note"] and "raise limit" in out["note"]
    many = log_file(*(record(i / 10, f"line {i}") for i in range(130)))
    default = await search(with_log(tmp_path / "many", many))
    assert default["returned"] == 100 and default["matched"] == 130 and default["truncated"] is True


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"pattern": "[unclosed", "regex": True}, "is not a regular expression (unterminated character set"),
        ({"pattern": "(a+)+$", "regex": True}, "exponential time"),
        ({"pattern": "   "}, "pattern: must not be empty"),
        ({"pattern": "x" * 201}, "at most 200"),
        ({"limit": 0}, "limit: must be between 1 and 500, got 0"),
        ({"limit": 501}, "limit: must be between 1 and 500, got 501"),
        ({"level": ["LOUD"]}, "'LOUD' is not allowed; allowed: DEBUG1"),
        ({"start": "2024-05-01T10:05:00Z", "end": "2024-05-01T10:01:00Z"}, "must be before end"),
        ({"start": "yesterday"}, "'yesterday' is not an ISO-8601 time"),
        ({"grep": "x"}, "unknown argument 'grep'"),
    ],
)
async def test_bad_arguments_are_tool_errors_naming_the_argument(
    tmp_path: Path, args: dict[str, object], says: str
) -> None:
    with pytest.raises(ToolError) as caught:
        await search(with_log(tmp_path), **args)
    assert caught.value.code == "bad_arguments" and says in caught.value.message, caught.value.message
    assert "search_logs takes: pattern (optional)" in caught.value.message


async def test_the_full_backend_serves_every_record_whatever_the_pattern(tmp_path: Path) -> None:
    # The pattern is the log's content query, as a metric name is the metrics' (Axis 1 serves everything).
    s = with_log(tmp_path)
    full = await search(s, BackendMode.FULL, pattern="too many clients", level=["FATAL"])
    assert full["matched"] == 3  # levels still apply; the pattern does not
    assert (await search(s, BackendMode.SELECTIVE, pattern="too many clients", level=["FATAL"]))["matched"] == 2


async def test_the_temporal_clock_holds_back_later_records(tmp_path: Path) -> None:
    # The alert fired at minute 4: a call sees nothing after it, however many calls came before; only `wait`
    # moves the clock, one minute per minute waited.
    s = with_log(tmp_path, **{"alert.json": _alert_at(4)})
    tools = RcaToolset(s, BackendMode.TEMPORAL)
    first = await tools.call("search_logs", {"level": ["FATAL"]})
    assert [r["timestamp"] for r in first["records"]] == [z(T0 + timedelta(minutes=3))]  # type: ignore[index]
    for _ in range(3):
        again = await tools.call("search_logs", {"level": ["FATAL"]})
    assert again["matched"] == 1  # type: ignore[index]
    await tools.call("wait", {"minutes": 3})
    later = await tools.call("search_logs", {"level": ["FATAL"]})
    assert later["matched"] == 3  # type: ignore[index]


async def test_a_scenario_without_a_log_answers_empty(tmp_path: Path) -> None:
    s = only(build_pack(tmp_path / "drill", {FOLDER: {}}))
    out = await search(s, pattern="anything")
    assert out == {"log_file": None, "matched": 0, "returned": 0, "truncated": False, "records": []}


async def test_the_env_reads_the_log_through_inspect_logs(tmp_path: Path) -> None:
    from sredrill.env import TaskCatalog
    from sredrill.env.toolset import EnvToolset

    with_log(tmp_path)
    catalog = TaskCatalog([load_pack(tmp_path / "drill")])
    env = catalog.make(next(i for i in catalog.ids() if i.startswith("rca-")), seed=0)
    env.reset()
    result = await EnvToolset(env).call("inspect_logs", {"target": "postgresql_log", "args": {"level": ["FATAL"]}})
    evidence = result["observation"]["inspection"]["evidence"]  # type: ignore[index]
    assert evidence["matched"] == 3  # type: ignore[index]


def _alert_at(minute: int) -> dict[str, object]:
    from tests.support.scenario_builder import alert

    return {**alert(), "startsAt": z(T0 + timedelta(minutes=minute))}


# -- lint and the view ------------------------------------------------------------------------------------


def test_a_log_line_that_spells_the_answer_is_a_leak(tmp_path: Path) -> None:
    log = log_file(record(1, "note to self: this is connection_exhaustion"))
    s = with_log(tmp_path, log, **{"answer.yml": answer()})
    pack = load_pack(tmp_path / "drill")
    leaks = [f for f in lint_pack(pack) if f.rule == "leak"]
    assert [(f.path, f.field, f.severity) for f in leaks] == [(s.files[LOG], "records[0].message", Severity.ERROR)]
    assert "connection_exhaustion" in leaks[0].message


def test_records_outside_the_window_and_another_instance_are_warnings(tmp_path: Path) -> None:
    log = log_file(record(1, "fine"), record(90, "an hour late"), db_instance_identifier="someone-else")
    with_log(tmp_path, log)
    findings = {(f.rule, f.field): f for f in lint_pack(load_pack(tmp_path / "drill")) if f.path.endswith(LOG)}
    assert set(findings) == {("dimension", "db_instance_identifier"), ("log_window", "records[1].timestamp")}
    assert all(f.severity is Severity.WARNING for f in findings.values())
    assert "start_time/end_time" in findings[("log_window", "records[1].timestamp")].fix


def test_the_built_in_pack_has_a_log_in_every_scenario_and_lints_clean() -> None:
    pack = load_pack("rds_postgres")
    assert all(s.postgresql_log is not None and s.postgresql_log.records for s in pack.scenarios)
    assert [f for f in lint_pack(pack) if f.path.endswith(LOG)] == []


def test_the_view_is_a_table_of_the_records(tmp_path: Path) -> None:
    s = with_log(tmp_path)
    (spec,) = [v for v in RDS.views if v.source == "aws_rds_postgresql_log"]
    view = spec.build(s)
    assert view.kind == "table" and view.columns == ("time", "level", "pid", "message")
    assert view.rows[2] == ("2024-05-01 10:03:00", "FATAL", "4242", "sorry, too many clients already")
    assert "sorry, too many clients already" in evidence_html(s)
