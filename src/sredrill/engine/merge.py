"""Merging shards: the N runs of one plan played `--shard K/N` (on N machines, each with its own store) joined
into one run in another store, as if the plan had run unsharded (`sredrill runs merge DB... --into DB`).

Runs are grouped by their plan without its shard (and without `jobs`, which changes no result): a group is one
merged run, and must hold every shard 1..N exactly once, each finished. Everything is checked before anything is
written, so a refused merge leaves the target as it was.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult, summarize
from sredrill.store import Store

from .execute import new_run_id
from .insights import insights_for_run
from .plan import PackSelection, RunPlan, stored_plan

__all__ = ["MergedRun", "merge_runs"]

_BATCH = 64
"""Results written per transaction: few commits, and a bounded number of trajectories held at once."""


@dataclass(frozen=True, slots=True)
class MergedRun:
    """One run `merge_runs` wrote: its id in the target, and the shard runs it joined (`db:run_id`, by K)."""

    run_id: str
    shards: tuple[str, ...]
    results: int
    title: str


@dataclass(frozen=True, slots=True)
class _Part:
    db: Path
    run_id: str
    plan: RunPlan
    report: RunReport


def merge_runs(sources: Sequence[str | Path], into: str | Path) -> list[MergedRun]:
    """Join the shard runs stored in `sources` into one run per plan, written to the store at `into`.

    Runs without a shard are left alone. Each merged run gets a new id; its results, trajectories and spans are
    the shards' (copied), its summary is computed over all of them, and its stored plan is the shards' plan
    without the shard (so `sredrill runs show`, `compare`, `export` and the UI read it as any run).

    Raises:
        InputError: a source that is not a store, the target among the sources, no shard run at all, a shard
            missing or given twice, shards of one plan with different N, or a shard that did not finish.
    """
    target = Path(into)
    paths = [Path(s) for s in sources]
    if not paths:
        raise InputError("no store to merge", hint="sredrill runs merge SHARD1.db SHARD2.db --into ALL.db")
    for path in paths:
        if not path.is_file():
            raise InputError("no such store to merge", path=str(path), hint="give the --db file each shard wrote")
        if target.exists() and path.resolve() == target.resolve():
            raise InputError("the target is one of the stores merged", path=str(path),
                             hint="--into a new file (the shards stay as they are)")  # fmt: skip
    groups: dict[str, list[_Part]] = {}
    for path in paths:
        with Store(path) as store:
            for record in store.list_runs(limit=1_000_000):
                plan, _ = stored_plan(store, record.run_id)
                if plan.shard is None:
                    continue
                report = store.report(record.run_id)
                if report is None:
                    continue
                if not record.finished:
                    raise InputError(
                        f"shard {plan.shard.text()} (run {record.run_id}) did not finish", path=str(path),
                        hint=f"finish it first: sredrill {plan.kind} --resume {record.run_id} --db {path}",
                    )  # fmt: skip
                groups.setdefault(_plan_key(plan), []).append(_Part(path, record.run_id, plan, report))
    if not groups:
        raise InputError("no shard run in the stores given", allowed=[str(p) for p in paths],
                         hint="run each part with --shard K/N and its own --db, then merge those files")  # fmt: skip
    ordered = [_in_order(parts) for parts in groups.values()]
    with Store(target) as store:
        return [_write(store, parts) for parts in ordered]


def _plan_key(plan: RunPlan) -> str:
    """What the shards of one run share: the plan but its shard's K, `jobs`, `workers` and `executor` (they
    change no result) and, without the incidents pack, the episode key (each run draws one; only the incidents
    pack plays by it)."""
    from .incident_suite import INCIDENTS_PACK

    assert plan.shard is not None
    data = plan.model_copy(update={"shard": None, "jobs": 1, "workers": 1, "executor": "local"}).stored()
    if not isinstance(plan.selection, PackSelection) or INCIDENTS_PACK not in plan.selection.packs:
        data["episode_key"] = None
    return json.dumps({"plan": data, "shards": plan.shard.count}, sort_keys=True)


def _in_order(parts: list[_Part]) -> list[_Part]:
    """The parts by K, every one of 1..N there once."""
    count = parts[0].plan.shard.count if parts[0].plan.shard is not None else 1
    by_index: dict[int, _Part] = {}
    for part in parts:
        assert part.plan.shard is not None
        index = part.plan.shard.index
        if index in by_index:
            other = by_index[index]
            raise InputError(
                f"shard {index}/{count} is there twice: run {other.run_id} ({other.db}) and run {part.run_id} "
                f"({part.db})", hint="merge one run of each shard (delete the other with sredrill runs delete)",
            )  # fmt: skip
        by_index[index] = part
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        names = ", ".join(f"{k}/{count}" for k in missing)
        raise InputError(f"shard {names} of run {parts[0].run_id}'s plan is missing",
                         hint="run the missing part with the same flags and --shard K/N, then merge again")  # fmt: skip
    return [by_index[k] for k in range(1, count + 1)]


def _write(store: Store, parts: list[_Part]) -> MergedRun:
    first = parts[0]
    run_id = new_run_id()
    plan = first.plan.model_copy(update={"shard": None})
    started_at = min(p.report.started_at for p in parts)
    store.begin_run(run_id, kind=plan.kind, agent=first.report.agent, mode=first.report.mode,
                    started_at=started_at, config=plan.stored())  # fmt: skip
    results: list[TestResult] = []
    for part in parts:
        with Store(part.db) as source:
            batch: list[tuple[TestResult, Any, Any]] = []
            for result in part.report.results:
                batch.append(
                    (result, source.trajectory(part.run_id, result.id), source.test_spans(part.run_id, result.id))
                )
                if len(batch) == _BATCH:  # one transaction per batch, not per result; a batch's trajectories only
                    store.write_results(run_id, batch)
                    batch = []
            if batch:
                store.write_results(run_id, batch)
            results.extend(part.report.results)
    report = RunReport(
        run_id=run_id,
        agent=first.report.agent,
        mode=first.report.mode,
        started_at=started_at,
        # The shards ran side by side: the merged run took as long as its slowest part.
        duration_ms=max(p.report.duration_ms for p in parts),
        summary=summarize(results, repeat=plan.repeat, retries=plan.retries),
        results=results,
        insights=insights_for_run(results),
        isolation=first.report.isolation,
        generated=first.report.generated,
    )
    store.finish_run(run_id, report, stored={r.id for r in results})
    title = f"{plan.kind} · {first.report.agent or 'no agent'} · {len(parts)} shards"
    return MergedRun(
        run_id=run_id,
        shards=tuple(f"{p.db}:{p.run_id}" for p in parts),
        results=len(results),
        title=title,
    )
