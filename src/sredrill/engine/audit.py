"""`sredrill audit`: the red-team agents and the baselines beside the reference agent, per pack and difficulty.

A grading that a shortcut passes does not measure investigation (issue 16). Every agent runs through the same
engine as `sredrill run` (`run_packs`), one pack at a time:

- `reference (dev)`: the reference agent; on a built-in pack a development figure (it was built on that pack).
- red-team agents (`sredrill.agents.redteam`): the label-oracle stuffer, given each scenario's true modes by
  its spec (`redteam:stuffer=MODE+MODE`, one run per group of scenarios sharing their modes: the only way the
  answer reaches it); alert-only; the z-score shortcut; every constant answer (the best one is reported); the
  retry guesser under `--retries 5`, whose headline is its first attempt.
- the baselines `majority`, `keyword`, `random`.

Every figure is pass@1: a result's first attempt. A red-team agent above `REDTEAM_LIMIT` on difficulty ≥ 2 is
flagged (the table marks it red and the command exits 1). Difficulties are bucketed `≤1`, `2`, `3+`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sredrill.errors import InputError
from sredrill.results import Rate, RunReport, TestResult, TestStatus

from .api import run_packs
from .config import Settings
from .execute import RunOptions

__all__ = [
    "BUCKETS",
    "GUESSER_RETRIES",
    "REDTEAM_LIMIT",
    "AuditRow",
    "PackAudit",
    "audit_json",
    "audit_packs",
    "audit_tables",
    "first_attempt",
    "is_flagged",
]

REDTEAM_LIMIT = 0.10
"""The most a red-team agent may pass (pass@1) on difficulty ≥ 2 (issue 16, "How we will know")."""
GUESSER_RETRIES = 5
EVALUATION_SEEDS = 1_000_000
"""Generated sets of this seed and up are evaluation sets (docs/generator.md, "Seeds"); below, development."""
BUCKETS = ("all", "≤1", "2", "3+", "≥2")
"""The difficulty columns: every result, then by level; `≥2` is what the limit reads."""

Role = Literal["reference", "redteam", "baseline"]
_BASELINES = ("majority", "keyword", "random")


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One agent's line of a pack's table."""

    agent: str
    """The label shown (`reference (dev)`, `redteam:stuffer (oracle)`, `redteam:constant (best: storage_full)`)."""
    role: Role
    rates: dict[str, Rate]
    """Bucket (`BUCKETS`) -> pass@1 counts."""
    runs: tuple[str, ...] = ()
    """The run ids behind the row."""
    note: str = ""
    """What else to know (the guesser's rate after its retries; why a row did not run)."""


@dataclass(frozen=True, slots=True)
class PackAudit:
    """One pack's table (per axis, with `--axis2`)."""

    pack: str
    axis: int
    builtin: bool
    rows: list[AuditRow] = field(default_factory=list)
    development: str = ""
    """Why the reference agent's figure is a development one (it was built on this pack, or the set's seed is
    not an evaluation seed); empty when it is not."""


def first_attempt(result: TestResult) -> TestStatus:
    """A result's first attempt: pass@1, whatever retries forgave after it."""
    return result.attempts[0].status if result.attempts else result.status


def _rate(statuses: Sequence[TestStatus]) -> Rate:
    passed = sum(s == TestStatus.PASSED for s in statuses)
    failed = sum(s == TestStatus.FAILED for s in statuses)
    graded = passed + failed
    return Rate(
        total=len(statuses),
        passed=passed,
        failed=failed,
        errored=len(statuses) - graded,
        pass_rate=passed / graded if graded else None,
    )


def _bucket(difficulty: int | None) -> str | None:
    if difficulty is None:
        return None
    return "≤1" if difficulty <= 1 else "2" if difficulty == 2 else "3+"


def _rates(results: Sequence[TestResult], *, final: bool = False) -> dict[str, Rate]:
    status = (lambda r: r.status) if final else first_attempt
    out = {"all": _rate([status(r) for r in results])}
    for bucket in BUCKETS[1:4]:
        out[bucket] = _rate([status(r) for r in results if _bucket(r.difficulty) == bucket])
    out["≥2"] = _rate([status(r) for r in results if r.difficulty is not None and r.difficulty >= 2])
    return out


def is_flagged(row: AuditRow) -> bool:
    """A red-team agent above the limit on difficulty ≥ 2."""
    rate = row.rates["≥2"].pass_rate
    return row.role == "redteam" and rate is not None and rate > REDTEAM_LIMIT


def _axis(result: TestResult) -> int:
    return result.axis if result.axis is not None else (2 if result.id.endswith("#2") else 1)


class _Quiet:
    """The audit prints its tables at the end; its runs report nothing on the way."""

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@dataclass(slots=True)
class _Runner:
    pack: str
    settings: Settings
    options: RunOptions
    store: Any | None
    axis2: bool
    seed: int | None
    generate: str | None = None
    """A generated set's spec: it is what runs (made again by each run, one scenario at a time), not `pack`."""

    async def run(self, agent: str, *, scenarios: Sequence[str] = (), retries: int = 0) -> RunReport:
        report: RunReport = await run_packs(
            [] if self.generate else [self.pack],
            settings=replace(self.settings, agent=agent),
            options=replace(self.options, retries=retries),
            listener=_Quiet(),
            store=self.store,
            axis2=self.axis2,
            scenario_ids=scenarios,
            seed=self.seed,
            generate=self.generate,
        )
        return report


@dataclass(frozen=True, slots=True)
class _Audited:
    """What an audit needs of a pack: its name, vocabulary, and each scenario's id and true modes."""

    name: str
    """The pack's name (what the tables show)."""
    target: str
    """What a run is given: the built-in name or the folder, as the user wrote it."""
    builtin: bool
    modes: dict[str, tuple[str, ...]]
    """Scenario id (`pack/folder` for a pack, the folder for a generated set) -> its true modes."""
    vocabulary_names: tuple[str, ...]
    generate: str | None = None
    development: str = ""


def _audited_pack(name: str) -> _Audited:
    from sredrill.scenarios import load_pack

    pack = load_pack(name)
    modes = {s.qualified_id: tuple(sorted(s.failure_modes)) for s in pack.scenarios}
    target = pack.name if pack.builtin else str(name)
    return _Audited(pack.name, target, pack.builtin, modes, tuple(pack.vocabulary.names))


def _audited_set(spec_text: str) -> _Audited:
    """A generated set, each scenario made once for its modes and dropped (its runs make it again)."""
    from sredrill.generate import parse_generate_spec

    from .generated import StreamedSet

    spec = parse_generate_spec(spec_text)
    streamed = StreamedSet(spec)
    modes = {e.folder: tuple(sorted(streamed.load(e).failure_modes)) for e in streamed.entries}
    names = tuple(streamed.vocabulary.names)
    dev = (
        f"seed {spec.seed} is not an evaluation seed; those are {EVALUATION_SEEDS:,} and up, docs/generator.md"
        if spec.seed < EVALUATION_SEEDS
        else ""
    )
    return _Audited(streamed.name, streamed.name, False, modes, names, generate=spec_text, development=dev)


def _row(agent: str, role: Role, reports: Sequence[RunReport], axis: int, **kw: Any) -> AuditRow:
    results = [r for report in reports for r in report.results if _axis(r) == axis]
    return AuditRow(agent, role, _rates(results), tuple(r.run_id for r in reports), **kw)


async def audit_packs(
    packs: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    store: Any | None = None,
    axis2: bool = False,
    seed: int | None = 0,
    generate: Sequence[str] = (),
) -> list[PackAudit]:
    """Run the reference agent, every red-team agent and the baselines on each pack and each generated set
    (`generate`: specs, as `sredrill run --generate` takes them); one audit per pack (and axis, with `axis2`).

    Raises:
        InputError: a pack does not load, a spec does not parse, or an option is out of range.
    """
    options.check()
    out: list[PackAudit] = []
    for pack in [*(_audited_pack(n) for n in packs), *(_audited_set(g) for g in generate)]:
        runner = _Runner(pack.target, settings, options, store, axis2, seed, generate=pack.generate)
        reports: dict[str, list[RunReport]] = {}
        notes: dict[str, str] = {}
        reports["reference"] = [await runner.run("reference")]
        # The oracle: each group of scenarios with the same true modes gets a stuffer told those modes.
        groups: dict[tuple[str, ...], list[str]] = {}
        for sid, modes in pack.modes.items():
            if modes:
                groups.setdefault(modes, []).append(sid)
        reports["stuffer"] = [
            await runner.run("redteam:stuffer=" + "+".join(modes), scenarios=ids) for modes, ids in groups.items()
        ]
        for agent in ("redteam:alert-only", "redteam:zscore"):
            reports[agent] = [await runner.run(agent)]
        constants = {m: await runner.run(f"redteam:constant={m}") for m in pack.vocabulary_names if m != "unknown"}
        reports["guesser"] = [await runner.run("redteam:guesser", retries=GUESSER_RETRIES)]
        for agent in _BASELINES:
            try:
                reports[agent] = [await runner.run(agent)]
            except InputError as exc:  # majority without a declared training split: shown, not fatal
                reports[agent], notes[agent] = [], f"not run: {exc.message}"
        for axis in (1, 2) if axis2 else (1,):
            rows = [
                _row(
                    "reference (dev)" if pack.development or pack.builtin else "reference",
                    "reference",
                    reports["reference"],
                    axis,
                ),
                _row("redteam:stuffer (label oracle)", "redteam", reports["stuffer"], axis),
                _row("redteam:alert-only", "redteam", reports["redteam:alert-only"], axis),
                _row("redteam:zscore", "redteam", reports["redteam:zscore"], axis),
                _best_constant(constants, axis),
                _guesser(reports["guesser"], axis),
            ]
            rows += [
                _row(a, "baseline", reports[a], axis, note=notes.get(a, "")) for a in ("majority", "keyword", "random")
            ]
            out.append(PackAudit(pack.name, axis, pack.builtin, rows, development=pack.development))
    return out


def _best_constant(constants: dict[str, RunReport], axis: int) -> AuditRow:
    """The constant answer that passes most on difficulty ≥ 2 (then overall): the one the limit is about."""
    rows = {m: _row(f"redteam:constant (best: {m})", "redteam", [r], axis) for m, r in constants.items()}

    def key(mode: str) -> tuple[float, float, str]:
        rates = rows[mode].rates
        return (-(rates["≥2"].pass_rate or 0.0), -(rates["all"].pass_rate or 0.0), mode)

    best = min(rows, key=key)
    row = rows[best]
    return replace(row, runs=tuple(r.run_id for r in constants.values()), note=f"best of {len(rows)} constants")


def _guesser(reports: Sequence[RunReport], axis: int) -> AuditRow:
    row = _row(f"redteam:guesser (--retries {GUESSER_RETRIES})", "redteam", reports, axis)
    results = [r for report in reports for r in report.results if _axis(r) == axis]
    final = _rates(results, final=True)["all"]
    return replace(row, note=f"pass@1; after retries {final.passed}/{final.total} (not the headline)")


# -- rendering -----------------------------------------------------------------------------------------------


def _cell(rate: Rate) -> str:
    if not rate.total:
        return "—"
    pct = "n/a" if rate.pass_rate is None else f"{rate.pass_rate * 100:.0f}%"
    return f"{rate.passed}/{rate.passed + rate.failed} {pct}"


def audit_tables(audits: Sequence[PackAudit]) -> list[RenderableType]:
    """One table per pack (and axis): agent × pass@1 overall and per difficulty; a flagged row in red."""
    parts: list[RenderableType] = []
    for audit in audits:
        if parts:
            parts.append(Text(""))
        title = f"audit · {audit.pack} · Axis {audit.axis} · pass@1 (limit for red-team agents on ≥2: ≤10%)"
        table = Table("agent", *BUCKETS, "note", title=title, header_style="bold", title_justify="left")
        for row in audit.rows:
            style = "bold red" if is_flagged(row) else None
            note = ("ABOVE LIMIT on ≥2; " if is_flagged(row) else "") + row.note
            table.add_row(row.agent, *(_cell(row.rates[b]) for b in BUCKETS), note, style=style)
        parts.append(table)
        if why := _development(audit):
            parts.append(Text(f"reference (dev): a development figure ({why})"))
    return parts


def _development(audit: PackAudit) -> str:
    return audit.development or ("the agent was built on this pack" if audit.builtin else "")


def audit_json(audits: Sequence[PackAudit]) -> dict[str, Any]:
    """`sredrill audit --json`: every pack's rows with their rates per bucket, and whether any is flagged."""
    return {
        "limit": REDTEAM_LIMIT,
        "flagged": any(is_flagged(r) for a in audits for r in a.rows),
        "packs": [
            {
                "pack": a.pack,
                "axis": a.axis,
                "builtin": a.builtin,
                "development": _development(a) or None,
                "rows": [
                    {
                        "agent": r.agent,
                        "role": r.role,
                        "flagged": is_flagged(r),
                        "note": r.note,
                        "runs": list(r.runs),
                        "pass_at_1": {b: rate.model_dump() for b, rate in r.rates.items()},
                    }
                    for r in a.rows
                ],
            }
            for a in audits
        ],
    }
