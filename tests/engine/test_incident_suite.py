"""The incidents pack as generated tests: which episodes run (tasks × seeds, `--seeds`, `--scenario`)."""

from __future__ import annotations

import pytest

from sredrill.engine import RunOptions, Settings, run_packs, run_sync
from sredrill.engine.incident_suite import FAMILY_SEEDS, SEEDS, Episode, incident_episode, incident_tests
from sredrill.engine.selection import MAX_SEEDS, parse_seeds
from sredrill.errors import InputError, NothingSelected
from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, family_task
from sredrill.results import RunReport, TestResult


class _Collect:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


def _ids(scenarios: list[str], *, seeds: str | None = None, packs: tuple[str, ...] = ("incidents",)) -> list[str]:
    report = run_sync(
        run_packs(list(packs), settings=Settings(agent="reference"), options=RunOptions(), listener=_Collect(),
                  store=None, scenario_ids=scenarios, seeds=seeds)
    )  # fmt: skip
    return [r.id for r in report.results]


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("0-4", (0, 1, 2, 3, 4)),
        ("7", (7,)),
        ("100000-100002,7", (100000, 100001, 100002, 7)),
        (" 3 - 4 , 3 ", (3, 4)),  # spaces allowed, each seed once, in the order given
        ("", None),
        (None, None),
        ([5, 2, 5], (5, 2)),
    ],
)
def test_seeds_take_ranges_single_seeds_and_comma_lists(text: str | list[int] | None, seeds: tuple | None) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "'a' is not a seed or a range of seeds"),
        ("-1", "'-1' is not a seed"),
        ("1.5", "'1.5' is not a seed"),
        ("1,,2", "'' is not a seed"),
        ("1-", "'1-' is not a seed"),
        ("²", "'²' is not a seed"),
        ("5-3", "the range '5-3' ends before it starts"),
        (f"0-{MAX_SEEDS}", f"more than {MAX_SEEDS} seeds"),
        ([1, -2], "not non-negative integers"),
        ([True], "not non-negative integers"),
    ],
)
def test_bad_seeds_are_input_errors_that_say_what_is_wrong(text: str | list, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_seeds(text)
    assert caught.value.hint or isinstance(text, list)


def test_seeds_choose_the_episodes_of_every_incident_task() -> None:
    default = [t.id for t in incident_tests() if "easy_cpu_spike#" in t.id]
    assert default == [f"incidents/easy_cpu_spike#seed{n}" for n in SEEDS]
    chosen = [t.id for t in incident_tests(seeds=(7, 9)) if "easy_cpu_spike#" in t.id]
    assert chosen == ["incidents/easy_cpu_spike#seed7", "incidents/easy_cpu_spike#seed9"]
    labels = next(t.labels for t in incident_tests(seeds=(7,)) if t.id == "incidents/easy_cpu_spike#seed7")
    assert "seed:7" in labels and "difficulty:1" in labels


def test_an_episode_named_by_scenario_must_be_one_of_the_runs_seeds() -> None:
    episode = incident_episode("easy_cpu_spike#seed12", seeds=(10, 11, 12))
    assert episode is not None and episode.seed == 12
    with pytest.raises(InputError, match="seeds 0-4") as caught:
        incident_episode("easy_cpu_spike#seed12")
    assert "--seeds" in (caught.value.hint or "")
    with pytest.raises(InputError, match="seeds 3,10-11"):
        incident_episode("easy_cpu_spike#seed12", seeds=(10, 11, 3))
    assert incident_episode("001-replication-lag", seeds=(1,)) is None  # an RCA id is not an incident one


def test_run_packs_plays_the_seeds_given() -> None:
    ids = _ids(["easy_cpu_spike"], seeds="5-6")
    assert ids == ["incidents/easy_cpu_spike#seed5", "incidents/easy_cpu_spike#seed6"]
    assert _ids(["easy_cpu_spike#seed6"], seeds="5-6") == ["incidents/easy_cpu_spike#seed6"]


def test_run_packs_refuses_bad_seeds_and_seeds_without_the_incidents_pack() -> None:
    with pytest.raises(InputError, match="not a seed or a range"):
        _ids([], seeds="x-y")
    with pytest.raises(InputError, match="not in this run") as caught:
        _ids([], seeds="1", packs=("rds_postgres",))
    assert not isinstance(caught.value, NothingSelected)
    assert "--pack incidents" in (caught.value.hint or "")


def test_the_pack_plays_each_family_on_the_first_evaluation_seeds() -> None:
    tests = {t.id: t for t in incident_tests()}
    for family in FAMILIES:
        ids = [i for i in tests if i.startswith(f"incidents/{family}#")]
        assert ids == [f"incidents/{family}#seed{n}" for n in FAMILY_SEEDS]
        for seed in FAMILY_SEEDS:
            test = tests[f"incidents/{family}#seed{seed}"]
            task = family_task(family, seed)
            assert f"difficulty:{task.difficulty}" in test.labels and f"seed:{seed}" in test.labels
            assert task.description in test.prompt and task.cause.kind not in test.prompt
    assert set(FAMILY_SEEDS) <= set(EVAL_SEEDS)
    assert len(tests) == 5 * 6 + 5 * len(FAMILIES)


def test_seeds_choose_the_family_episodes_too_and_difficulty_is_each_episodes() -> None:
    chosen = [t.id for t in incident_tests(seeds=(100_010, 7)) if t.id.startswith("incidents/web_api#")]
    assert chosen == ["incidents/web_api#seed100010", "incidents/web_api#seed7"]  # a train seed is allowed too
    hard = [t.id for t in incident_tests(difficulties=(3,), seeds=range(100_000, 100_020))]
    episodes = [(i.split("/")[1].split("#")[0], int(i.split("#seed")[1])) for i in hard]
    families = [(f, seed) for f, seed in episodes if f in FAMILIES]
    assert families and all(family_task(f, seed).difficulty == 3 for f, seed in families)
    assert {f for f, _ in episodes if f not in FAMILIES} == {"hard_mixed"}
    with pytest.raises(InputError, match="2147483647"):
        incident_tests(seeds=(2**31,))


def test_scenario_names_a_family_or_one_of_its_episodes() -> None:
    assert incident_episode("incidents/web_api#seed100003") == Episode("web_api", 100_003)
    assert incident_episode("data_platform") == Episode("data_platform", None)
    with pytest.raises(InputError, match="seeds 100000-100004"):
        incident_episode("web_api#seed3")
    with pytest.raises(InputError, match="did you mean 'web_api'"):
        incident_episode("incidents/web_apj")
