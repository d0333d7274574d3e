"""Generated keys from difficulty 2 (`rds-2`) reward the cause, not the label: the decisive records carry no word
of their mode, the top of Performance Insights is never the answer, a refuting level is about the confounder's
peak, and the label-oracle stuffer passes at most a tenth of the hard scenarios (docs/generator.md, "Which records
are decisive")."""

from __future__ import annotations

import asyncio
from functools import cache

from sredrill.agents import Task
from sredrill.agents.redteam import StufferAgent
from sredrill.agents.redteam.words import mode_score, tokens
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.serving import server_factory
from sredrill.generate import GenerateSpec, generated_pack
from sredrill.grading import grade_diagnosis
from sredrill.scenarios import Pack, Scenario, get_domain
from sredrill.trajectory import Recorder, Trajectory

SEED = 3
"""A development seed (docs/generator.md, "Seeds")."""


@cache
def pack(count: int = 20) -> Pack:
    return generated_pack(GenerateSpec(domain="rds", seed=SEED, count=count))


def hard(p: Pack) -> list[Scenario]:
    return [s for s in p.scenarios if int(s.metadata.scenario_difficulty) >= 2]


def items_of(scenario: Scenario) -> list[object]:
    return list(server_factory(get_domain(scenario.domain))(scenario).items())


def test_no_decisive_record_of_a_hard_fault_holds_a_word_of_its_mode() -> None:
    p = pack()
    checked = 0
    for s in hard(p):
        for mode, selectors in s.answer.decisive.items():
            for selector in selectors:
                assert "metric" not in selector.fields or selector.during is not None, (s.folder, selector.describe())
                if "metric" in selector.fields:
                    continue
                words = tokens(" ".join(v for k, v in selector.fields.items() if k != "resource"))
                assert mode_score(words, mode, p.vocabulary) == 0, (s.folder, mode, selector.describe())
                checked += 1
    assert checked >= 15


def test_the_heaviest_statement_and_user_of_a_hard_scenario_are_never_decisive() -> None:
    for s in hard(pack()):
        top = {}
        for item in items_of(s):
            kind = item.kind  # type: ignore[attr-defined]
            if kind in ("sql", "user") and kind not in top:  # served heaviest first
                top[kind] = item
        assert set(top) == {"sql", "user"}, s.folder
        for mode, selectors in s.answer.decisive.items():
            for selector in selectors:
                for item in top.values():
                    identity = item.identity  # type: ignore[attr-defined]
                    assert not selector.matches(item.kind, item.source, identity), (s.folder, mode)  # type: ignore[attr-defined]


def test_a_refuting_level_is_stated_over_the_confounders_peak() -> None:
    during = 0
    for s in hard(pack()):
        for hypothesis, selectors in s.answer.refuting.items():
            for selector in selectors:
                if selector.above is None and selector.below is None:
                    continue
                assert selector.during is not None, (s.folder, hypothesis, selector.describe())
                start, end = selector.during
                assert start < end
                during += 1
    assert during >= 5


def test_the_label_oracle_stuffer_passes_at_most_a_tenth_of_the_hard_scenarios() -> None:
    """Told the true modes, the stuffer calls every tool and cites the items whose words match them, the best of
    each tool and the most anomalous series (the full backend: Axis 1, where the data budget does not bind)."""
    p = pack()
    scenarios = hard(p)
    passed = []
    for s in scenarios:
        toolset = RcaToolset(s, BackendMode.FULL, vocabulary=p.vocabulary)
        recorder = Recorder()
        task = Task(run_id="r", prompt="p", alert=toolset.alert, tools=toolset.specs()).bind(toolset, recorder)
        reply = asyncio.run(StufferAgent(s.answer.expected_failure_modes, packs=[p]).run(task, recorder))
        grade = grade_diagnosis(
            s,
            reply.diagnosis,
            Trajectory(recorder.steps),
            axis=1,
            returned_metrics=set(toolset.returned_metrics()),
            vocabulary=p.vocabulary,
            served=toolset.served_items(),
        )
        if grade.passed:
            passed.append(s.folder)
    assert len(scenarios) >= 15
    assert len(passed) * 10 <= len(scenarios), passed
