"""Selection in the engine (issue 11, point 4), in process through its API: `--maxfail` in the scheduler (with
`--jobs`, `--retries`, `--repeat`, scopes whose tests are left out), `--last-failed` over a real store, the
nothing-selected outcome, option checks, and `--scenario`/`--difficulty` over both kinds of the built-in packs.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from sredrill.engine import RunOptions, Settings, run_eval_files, run_packs, run_sync
from sredrill.engine.plan import IsolationRequest
from sredrill.engine.selection import LastFailures, last_failures
from sredrill.errors import InputError, NothingSelected
from sredrill.results import RunReport, TestResult, TestStatus
from sredrill.store import Store

# The example `py:` agent: answers at once, without tools.
AGENT = "py:examples.agents.echo_agent:agent"
REPO = Path(__file__).resolve().parents[2]


class Collect:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.results: list[TestResult] = []
        self.stopped: list[str] = []

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None:
        self.started.append(name)

    def on_test_end(self, result: TestResult) -> None:
        self.results.append(result)

    def on_run_stopped(self, message: str) -> None:
        self.stopped.append(message)

    def on_run_end(self, report: RunReport) -> None: ...


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(REPO))  # `py:examples.agents…` imports from the repository


def write(root: Path, name: str, text: str) -> str:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def run_files(
    *paths: str, options: RunOptions = RunOptions(), store: Store | None = None, **kw
) -> tuple[RunReport, Collect]:
    listener = Collect()
    # At process level: these bodies write marker files in the working directory, which a sandbox keeps read-only.
    kw.setdefault("isolation", IsolationRequest(isolation="process"))
    report = run_sync(
        run_eval_files(list(paths), settings=Settings(agent=AGENT), options=options, listener=listener, store=store,
                       **kw)
    )  # fmt: skip
    return report, listener


# p = passes, f = fails; in file order, so with --jobs 1 the run order is known.
SEQUENCE = """
from sredrill import expect, test

for name in ["p1", "f1", "p2", "f2", "p3", "f3"]:
    @test(name)
    async def _(name=name):
        expect(name[0]).to_be("p")
"""


ALL_PASS = SEQUENCE.replace('expect(name[0]).to_be("p")', "expect(name).to_be(name)")


def statuses(report: RunReport) -> dict[str, str]:
    return {r.name: r.status.value for r in report.results}


def test_maxfail_stops_starting_tests_and_leaves_the_rest_out(tmp_path: Path) -> None:
    path = write(tmp_path, "seq_eval.py", SEQUENCE)
    report, heard = run_files(path, options=RunOptions(maxfail=2))
    assert statuses(report) == {"p1": "passed", "f1": "failed", "p2": "passed", "f2": "failed"}
    assert heard.started == ["p1", "f1", "p2", "f2"]  # the rest never started
    assert report.summary.total == 4  # not run is not passed, nor counted
    assert heard.stopped == ["stopped after 2 failures (--maxfail 2): 2 test(s) not run"]

    whole, heard = run_files(path, options=RunOptions())
    assert len(whole.results) == 6 and heard.stopped == []


def test_maxfail_with_jobs_lets_running_tests_finish(tmp_path: Path) -> None:
    path = write(tmp_path, "fails_eval.py", SEQUENCE.replace('"p1", ', "").replace('"p2", ', "").replace('"p3", ', ""))
    report, heard = run_files(path, options=RunOptions(maxfail=1, jobs=2))
    # f1 fails; f2 was running beside it and finishes; f3 never starts.
    assert 1 <= len(report.results) <= 2 and "f3" not in heard.started
    assert all(r.status == TestStatus.FAILED for r in report.results)
    assert heard.stopped == [f"stopped after 1 failure (--maxfail 1): {3 - len(report.results)} test(s) not run"]


def test_a_test_retried_into_a_pass_is_not_a_failure(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "flaky_eval.py",
        """
        from pathlib import Path
        from sredrill import expect, test

        @test("flaky")
        async def _():
            marker = Path("tried")
            first = not marker.exists()
            marker.write_text("x")
            expect(first).to_be(False)

        @test("steady")
        async def _():
            expect(1).to_be(1)

        @test("broken")
        async def _():
            expect(1).to_be(2)

        @test("after")
        async def _():
            expect(1).to_be(1)
        """,
    )
    report, heard = run_files(path, options=RunOptions(maxfail=1, retries=1))
    assert statuses(report) == {"flaky": "passed", "steady": "passed", "broken": "failed"}
    assert report.results[0].flaky
    assert heard.stopped == ["stopped after 1 failure (--maxfail 1): 1 test(s) not run"]


def test_with_repeat_a_test_counts_once(tmp_path: Path) -> None:
    path = write(tmp_path, "seq_eval.py", SEQUENCE)
    report, _ = run_files(path, options=RunOptions(maxfail=2, repeat=2))
    assert statuses(report) == {"p1": "passed", "f1": "failed", "p2": "passed", "f2": "failed"}
    assert all(len(r.attempts) == 2 for r in report.results)


def test_after_all_still_runs_when_the_rest_of_its_scope_is_left_out(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "scope_eval.py",
        """
        from pathlib import Path
        from sredrill import after_all, before_all, describe, expect, test

        with describe("db"):
            @before_all
            async def _():
                Path("opened").write_text("x")

            @after_all
            async def _():
                Path("closed").write_text("x")

            @test("fails first")
            async def _():
                expect(1).to_be(2)

            @test("left out")
            async def _():
                expect(1).to_be(1)

        @test("also left out")
        async def _():
            expect(1).to_be(1)
        """,
    )
    report, _ = run_files(path, options=RunOptions(maxfail=1))
    assert statuses(report) == {"fails first": "failed"}
    assert (tmp_path / "opened").exists() and (tmp_path / "closed").exists()


def test_a_file_that_fails_to_load_counts_toward_maxfail(tmp_path: Path) -> None:
    # As pytest -x with a collection error: nothing starts.
    broken = write(tmp_path, "broken_eval.py", "def (:\n")
    good = write(tmp_path, "seq_eval.py", SEQUENCE)
    report, heard = run_files(broken, good, options=RunOptions(maxfail=1))
    assert [r.status for r in report.results] == [TestStatus.ERRORED]
    assert heard.started == [] and heard.stopped == ["stopped after 1 failure (--maxfail 1): 6 test(s) not run"]


def test_last_failed_reruns_what_failed_in_the_latest_run_of_the_same_command_and_agent(tmp_path: Path) -> None:
    path = write(tmp_path, "seq_eval.py", SEQUENCE)
    store = Store(tmp_path / "runs.db")
    assert last_failures(store, kind="test", agent=AGENT) == LastFailures(run_id=None)
    first, _ = run_files(path, store=store)

    failures = last_failures(store, kind="test", agent=AGENT)
    assert failures.run_id == first.run_id
    assert failures.ids == {r.id for r in first.results if r.status == TestStatus.FAILED}
    assert last_failures(store, kind="test", agent="py:other:agent").run_id is None
    assert last_failures(store, kind="run", agent=AGENT).run_id is None

    again, _ = run_files(path, store=store, last_failed=failures)
    assert statuses(again) == {"f1": "failed", "f2": "failed", "f3": "failed"}
    config = store.get_run(again.run_id).config
    assert LastFailures.from_config(config["last_failed"]) == failures  # --resume keeps the selection

    # The failures are gone (the tests renamed): nothing selected, and no run stored for it.
    renamed = write(tmp_path, "seq_eval.py", SEQUENCE.replace('"f', '"g'))
    runs = len(store.list_runs())
    with pytest.raises(NothingSelected, match="none of the 3 test"):
        run_files(renamed, store=store, last_failed=last_failures(store, kind="test", agent=AGENT))
    assert len(store.list_runs()) == runs

    # A run with no failures: everything runs.
    passing = write(tmp_path, "seq_eval.py", ALL_PASS)
    run_files(passing, store=store)
    clean = last_failures(store, kind="test", agent=AGENT)
    assert clean.ids == frozenset() and "had no failures" in clean.note()
    everything, _ = run_files(passing, store=store, last_failed=clean)
    assert len(everything.results) == 6


def test_last_failed_reruns_every_test_of_a_file_that_failed_to_load(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    path = write(tmp_path, "late_eval.py", "def (:\n")
    other = write(tmp_path, "other_eval.py", ALL_PASS)
    run_files(path, other, store=store)
    failures = last_failures(store, kind="test", agent=AGENT)
    assert failures.files == {"late_eval.py"}
    write(tmp_path, "late_eval.py", SEQUENCE)  # fixed: its six tests are what failed to run
    report, _ = run_files(path, other, store=store, last_failed=failures)
    assert sorted(statuses(report)) == ["f1", "f2", "f3", "p1", "p2", "p3"]
    assert all(r.file == "late_eval.py" for r in report.results)


@pytest.mark.parametrize(
    ("kw", "reason"),
    [
        ({"grep": "nomatch"}, "no test of .* matches --grep 'nomatch'"),
        ({"labels": ["none-has-it"]}, "matches --label 'none-has-it'"),
    ],
)
def test_filters_that_match_nothing_raise_nothing_selected(tmp_path: Path, kw: dict, reason: str) -> None:
    path = write(tmp_path, "seq_eval.py", SEQUENCE)
    store = Store(tmp_path / "runs.db")
    with pytest.raises(NothingSelected, match=reason) as caught:
        run_files(path, store=store, **kw)
    assert caught.value.render().startswith("no tests selected: ")
    assert store.list_runs() == []


def test_eval_files_without_tests_select_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(NothingSelected, match="no eval files in"):
        run_files(str(tmp_path / "empty"))
    with pytest.raises(NothingSelected, match="register"):
        run_files(write(tmp_path, "none_eval.py", "x = 1\n"))
    with pytest.raises(InputError) as missing:  # a wrong path stays a usage error, not "nothing selected"
        run_files(str(tmp_path / "missing_eval.py"))
    assert not isinstance(missing.value, NothingSelected)


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (RunOptions(timeout_s=-1), "--timeout"),
        (RunOptions(timeout_s=0), "--timeout"),
        (RunOptions(timeout_s=math.nan), "--timeout"),
        (RunOptions(timeout_s=math.inf), "--timeout"),
        (RunOptions(jobs=0), "--jobs"),
        (RunOptions(retries=-1), "--retries"),
        (RunOptions(repeat=0), "--repeat"),
        (RunOptions(maxfail=0), "--maxfail"),
    ],
)
def test_options_that_make_no_sense_are_input_errors(tmp_path: Path, options: RunOptions, flag: str) -> None:
    path = write(tmp_path, "seq_eval.py", SEQUENCE)
    with pytest.raises(InputError, match=flag):
        run_files(path, options=options)
    with pytest.raises(InputError, match=flag):
        run_packs_ids(["000-healthy"], options=options)


EPISODE_KEY = "the-selection-tests-episode-key"
"""A run keys its family episodes (a fresh key each run): a difficulty selects other family seeds per key."""


def run_packs_ids(
    scenario_ids: list[str], *, difficulty: str | None = None, packs: tuple[str, ...] = (), options=RunOptions()
) -> list[str]:
    report = run_sync(
        run_packs(list(packs), settings=Settings(agent="reference"), options=options, listener=Collect(), store=None,
                  scenario_ids=scenario_ids, difficulty=difficulty, episode_key=EPISODE_KEY)
    )  # fmt: skip
    return [r.id for r in report.results]


def test_scenario_ids_pick_rca_scenarios_and_incident_episodes() -> None:
    assert run_packs_ids(["001-replication-lag"]) == ["rds_postgres/001-replication-lag#1"]
    assert run_packs_ids(["easy_cpu_spike#seed2"]) == ["incidents/easy_cpu_spike#seed2"]
    assert sorted(run_packs_ids(["incidents/easy_cpu_spike", "rds_postgres/000-healthy"])) == [
        "incidents/easy_cpu_spike#seed0", "incidents/easy_cpu_spike#seed1", "incidents/easy_cpu_spike#seed2",
        "incidents/easy_cpu_spike#seed3", "incidents/easy_cpu_spike#seed4", "rds_postgres/000-healthy#1",
    ]  # fmt: skip


def test_difficulty_filters_both_kinds_on_their_own_scale() -> None:
    from sredrill.engine.incident_suite import incident_tests
    from sredrill.env import TaskKind, list_tasks
    from sredrill.scenarios import load_pack

    ids = run_packs_ids([], difficulty="3")
    rca = sorted(f"rds_postgres/{s.id}#1" for s in load_pack("rds_postgres").scenarios if s.difficulty == 3)
    hard = [t.task_id for t in list_tasks() if t.kind == TaskKind.INCIDENT and t.difficulty == 3]
    assert sorted(i for i in ids if i.startswith("rds_postgres/")) == rca
    # hard_mixed × seeds 0-4, and the families' episodes whose seed drew a hard task
    episodes = sorted(t.id for t in incident_tests(difficulties=(3,), episode_key=EPISODE_KEY))
    assert sorted(i for i in ids if i.startswith("incidents/")) == episodes
    assert {e.split("/")[1].split("#")[0] for e in episodes} >= set(hard)
    with pytest.raises(NothingSelected, match="--difficulty 4"):  # incident tasks go up to 3
        run_packs_ids([], difficulty="4", packs=("incidents",))


@pytest.mark.parametrize(
    ("sid", "message"),
    [
        ("easy_cpu_spke", "did you mean 'easy_cpu_spike'"),
        ("001-replication-lga", "did you mean '001-replication-lag'"),
        ("incidents/nope", "no incident task 'nope'"),
        ("easy_cpu_spike#seed9", "seeds 0-4"),
        ("otherpack/000-healthy", "no pack 'otherpack'"),
    ],
)
def test_an_unknown_scenario_id_is_an_input_error_before_anything_runs(sid: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        run_packs_ids([sid])
    assert not isinstance(caught.value, NothingSelected)


def test_an_incident_task_needs_the_incidents_pack_in_the_run() -> None:
    with pytest.raises(InputError, match="add --pack incidents"):
        run_packs_ids(["easy_cpu_spike"], packs=("rds_postgres",))
