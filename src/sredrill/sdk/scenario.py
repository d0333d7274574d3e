"""Scenarios in SDK tests: one pack scenario's prompt, tools and answer key, for a test body to use.

`scenario("rds_postgres/001-replication-lag")` gives a test what `sredrill run` gives the agent (the RCA
prompt, the blinded alert, the scenario's toolset on a backend) and grades the agent's diagnosis against the
answer key exactly as `sredrill run` does (`sredrill.grading`), one `check` signal per check.

A `ScenarioCase` holds no state of its own between tests: the toolset of an agent run lives on the running
test's context (STYLE #10), so a case made at an eval file's top level is safe under `--jobs`, `--repeat`
and `--retries`.

Examples:
    >>> from sredrill import test, expect, scenario
    >>> @test("finds the replication lag")
    ... async def _(agent):
    ...     sc = scenario("rds_postgres/001-replication-lag")
    ...     result = await agent.run(sc.prompt, tools=sc.tools)
    ...     expect(result).to_diagnose(sc)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any, Final

from pydantic import JsonValue

from sredrill.errors import PackError, StateError, did_you_mean
from sredrill.evidence import BackendMode, RcaToolset, ScenarioEvidence
from sredrill.grading import Grade, grade_diagnosis
from sredrill.harness.context import TestContext, context_or_none
from sredrill.harness.result import RunResult
from sredrill.results import Signal
from sredrill.scenarios import Pack, Scenario, builtin_pack_names, get_domain, load_pack

__all__ = ["RCA_PROMPT", "ScenarioCase", "scenario"]

# What every agent is asked is its scenario's domain's prompt (`Domain.prompt`); nothing in it names a scenario,
# its folder or its failure mode (blind mode). The RCA suite (`sredrill run`) asks the same: its bodies are
# ScenarioCases too. `RCA_PROMPT` is the domain-neutral shape of one, for agents written without a domain.
RCA_PROMPT: Final = (
    "An alert fired on a production system. Investigate it with the tools you have. Find the root cause, rule "
    "out the alternatives the evidence contradicts, cite the evidence for each claim, and submit a diagnosis."
)
# The pack `sredrill run --pack incidents` runs is the incident environment's, not a folder of scenarios.
_INCIDENTS_PACK: Final = "incidents"


class ScenarioCase:
    """One scenario of a pack, ready for an SDK test: prompt, alert, tools and grading, as `sredrill run`.

    Attributes:
        id: the scenario's `pack/folder` id.
        difficulty: its difficulty (1–4).
        mode: the backend serving the tools' evidence.
        axis: the axis the diagnosis is graded on (on 2, `ruling_out` and `required_queries` gate, as `--axis2`).
        blind: whether the alert is blinded (always, unless you ask for the raw one).
        prompt: what `sredrill run` asks the agent (the scenario's domain's prompt).
    """

    __slots__ = (
        "_evidence", "_key", "_local", "axis", "blind", "difficulty", "id", "mode", "pack", "prompt", "scenario"
    )  # fmt: skip

    def __init__(
        self,
        pack: Pack,
        scenario: Scenario,
        *,
        mode: BackendMode | str = BackendMode.FULL,
        axis: int = 1,
        blind: bool = True,
        evidence: ScenarioEvidence | None = None,
    ) -> None:
        """A case over a loaded scenario; `scenario(ID)` finds and loads it for you.

        `evidence` shares the scenario's prepared evidence between cases over the same scenario (the axes of
        `sredrill run`); by default the case prepares its own on first use.

        Raises:
            PackError: `mode` is not a backend, or `axis` is not 1 or 2.
        """
        try:
            self.mode = BackendMode(mode)
        except ValueError:
            raise PackError(
                f"mode {mode!r} is not a backend",
                path=scenario.qualified_id,
                allowed=[m.value for m in BackendMode],
                hint="e.g. scenario(ID, mode='selective')",
            ) from None
        if axis not in (1, 2) or isinstance(axis, bool):
            raise PackError(
                f"axis {axis!r} is not an axis",
                path=scenario.qualified_id,
                allowed=["1", "2"],
                hint="axis=2 makes ruling_out and required_queries gate, as sredrill run --axis2 does",
            )
        self.pack = pack
        self.scenario = scenario
        self.id = scenario.qualified_id
        self.difficulty = scenario.difficulty
        self.axis = axis
        self.blind = blind
        self.prompt = get_domain(scenario.domain).task_prompt(pack.vocabulary)
        self._key = f"sredrill.scenario:{id(self)}"
        self._local: RcaToolset | None = None
        self._evidence = evidence if evidence is not None else ScenarioEvidence(scenario, pack.vocabulary)

    def __repr__(self) -> str:
        return f"ScenarioCase({self.id!r}, mode={self.mode.value!r}, axis={self.axis})"

    @property
    def tools(self) -> RcaToolset:
        """The scenario's RCA toolset for this test's agent run (`agent.run(sc.prompt, tools=sc.tools)`).

        One toolset per test: the first read in a test builds it, later reads in the same test return it, and
        `grade` reads what it served. Read inside a test, it also hands the agent's Task the blinded alert
        (`task.alert`), as `sredrill run` does.
        """
        ctx = context_or_none()
        if ctx is None:  # outside a test (a unit test of grading): one toolset for this case
            if self._local is None:
                self._local = self._toolset()
            return self._local
        toolset = ctx.rca_toolsets.get(self._key)
        if toolset is None:
            toolset = ctx.rca_toolsets[self._key] = self._toolset()
        return toolset

    @property
    def alert(self) -> dict[str, JsonValue]:
        """The alert the agent sees (blinded unless `blind=False`): what `get_alert` and `task.alert` carry."""
        return self.tools.alert

    def grade_diagnosis(self, result: RunResult) -> Grade:
        """Grade the agent run's diagnosis against the answer key, as `sredrill run` does.

        The diagnosis is the one the agent returned, else the last one it sent to `submit_diagnosis`; the
        evidence is what this test's toolset served.

        Raises:
            StateError: inside a test, no agent run used this case's tools (`tools=sc.tools`).
        """
        toolset = self._used_toolset()
        return grade_diagnosis(
            self.scenario,
            result.diagnosis or toolset.submitted,
            result.trajectory,
            axis=self.axis,
            returned_metrics=toolset.returned_metrics(),
            served=toolset.served_items(),
            budget=toolset.data_budget,
            vocabulary=self.pack.vocabulary,
            loops=result.loops,
            no_diagnosis=result.rejected_answer,
        )

    def grade(self, result: RunResult) -> list[Signal]:
        """One `check` signal per grading check (name = check id, role gate or observe), as `sredrill run`.

        `expect(result).to_diagnose(sc)` records them and fails the test on a failed gate check.

        Raises:
            StateError: inside a test, no agent run used this case's tools (`tools=sc.tools`).
        """
        return list(self.grade_diagnosis(result).signals)

    def _toolset(self) -> RcaToolset:
        return RcaToolset(self.scenario, self.mode, blind=self.blind, evidence=self._evidence)

    def _used_toolset(self) -> RcaToolset:
        ctx: TestContext | None = context_or_none()
        if ctx is None:
            return self.tools
        toolset = ctx.rca_toolsets.get(self._key)
        if toolset is None:
            raise StateError(
                f"nothing to grade for {self.id}: this test's agent run did not get the scenario's tools; "
                "pass them: result = await agent.run(sc.prompt, tools=sc.tools)"
            )
        return toolset


def scenario(
    scenario_id: str,
    *,
    pack: str | os.PathLike[str] | Pack | None = None,
    mode: BackendMode | str = BackendMode.FULL,
    axis: int = 1,
    blind: bool = True,
) -> ScenarioCase:
    """A scenario of a pack, for an SDK test: its prompt, tools and grading (see `ScenarioCase`).

    Args:
        scenario_id: `pack/folder` (`rds_postgres/001-replication-lag`), or a folder alone, looked up in
            `pack` or else in every built-in pack.
        pack: a built-in pack name, a pack folder's path, or a loaded `Pack`; default: the built-in packs.
        mode: the backend serving the evidence: `full` (default), `selective` or `temporal`.
        axis: 1 (default) or 2, the axis the diagnosis is graded on.
        blind: False serves the raw alert (as `--no-blind`).

    Returns:
        The case; call it at an eval file's top level or inside a test body, both are safe.

    Raises:
        PackError: no such pack or scenario (with "did you mean" and the valid ids), the scenario does not
            load, or a bad `mode`/`axis`.

    Examples:
        >>> sc = scenario("rds_postgres/001-replication-lag", mode="selective")
        >>> sc.id, [t.name for t in sc.tools.specs()][:2]
        ('rds_postgres/001-replication-lag', ['get_alert', 'list_metrics'])
    """
    if not isinstance(scenario_id, str) or not scenario_id.strip():
        raise PackError(
            f"scenario() needs a scenario id, got {scenario_id!r}",
            hint="e.g. scenario('rds_postgres/001-replication-lag'); list them with: sredrill scenarios list",
        )
    owner, _, folder = scenario_id.rpartition("/")
    if pack is not None:
        loaded = pack if isinstance(pack, Pack) else load_pack(pack)
        if owner and owner != loaded.name:
            raise PackError(
                f"scenario {scenario_id!r} names pack {owner!r}, but pack={loaded.name!r} was given",
                hint=f"pass the folder alone (scenario({folder!r}, pack=...)) or leave out pack=",
            )
        return ScenarioCase(loaded, loaded.scenario(folder), mode=mode, axis=axis, blind=blind)
    if owner == _INCIDENTS_PACK:
        raise PackError(
            f"{scenario_id!r}: 'incidents' is the incident environment, not a pack of RCA scenarios",
            hint="run its episodes with: sredrill run --pack incidents; in Python: sredrill.env.make(TASK_ID)",
        )
    names = builtin_pack_names()
    if owner:
        if owner in names:
            return _case(load_pack(owner), folder, mode, axis, blind)
        # Not a built-in name: maybe a pack folder's path, `path/to/pack/001-x`.
        if os.path.isdir(owner):
            return _case(load_pack(owner), folder, mode, axis, blind)
        hint = did_you_mean(owner, names)
        raise PackError(
            f"no pack {owner!r} for scenario {scenario_id!r}: not a built-in pack and no such folder",
            allowed=names,
            hint=(hint + "\n  " if hint else "") + "use pack/folder with a built-in pack, or pass pack=PATH",
        )
    packs = [load_pack(name) for name in names]
    for candidate in packs:
        if folder in candidate.folders:
            return _case(candidate, folder, mode, axis, blind)
    known = [f"{p.name}/{f}" for p in packs for f in p.folders]
    hint = did_you_mean(folder, [f for p in packs for f in p.folders])
    raise PackError(
        f"no scenario {scenario_id!r} in the built-in packs",
        allowed=known,
        hint=(hint + "\n  " if hint else "")
        + "list them with: sredrill scenarios list; a pack of your own: scenario(ID, pack=PATH)",
    )


def _case(pack: Pack, folder: str, mode: Any, axis: int, blind: bool) -> ScenarioCase:
    return ScenarioCase(pack, pack.scenario(folder), mode=mode, axis=axis, blind=blind)
