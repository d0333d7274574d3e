"""What `sredrill test` and `sredrill list` do, callable from Python and the server alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sredrill.errors import InputError, NothingSelected
from sredrill.harness import JudgeConfig, Runtime, TestDef
from sredrill.results import ResultKind, RunReport, TestResult, TestStatus

from .config import Settings
from .execute import RunListener, RunOptions, execute, new_run_id
from .loader import LoadedTests, load_eval_files, select_tests
from .selection import LastFailures, nothing_selected, parse_difficulties

__all__ = [
    "BASELINE_AGENTS",
    "TestPlan",
    "list_tests",
    "plan_tests",
    "run",
    "run_baselines",
    "run_eval_files",
    "run_packs",
    "run_sync",
]


@dataclass(frozen=True, slots=True)
class TestPlan:
    """The tests a run will execute, and the load errors that become `errored` results."""

    __test__ = False

    tests: list[TestDef]
    loaded: LoadedTests


def plan_tests(paths: Sequence[str], *, grep: str | None = None, labels: Sequence[str] = ()) -> TestPlan:
    """Load eval files and select tests.

    Raises:
        InputError: no test could be loaded at all (every path is wrong), or `--grep` is invalid.
    """
    loaded = load_eval_files(paths)
    if not loaded.tests and loaded.errors and all(e in loaded.empty_folders for e in loaded.errors):
        # As pytest: a folder with no test files selects nothing (exit 5); a wrong path stays a usage error.
        raise NothingSelected(
            "no eval files in " + ", ".join(e.path or "?" for e in loaded.errors),
            hint="eval files are named *_eval.py or eval_*.py",
        )
    if not loaded.tests and loaded.errors:
        first = loaded.errors[0]
        raise InputError(
            "no tests could be loaded:\n" + "\n".join(e.render() for e in loaded.errors),
            hint=first.hint,
        )
    return TestPlan(tests=select_tests(loaded.tests, grep=grep, labels=labels), loaded=loaded)


def list_tests(paths: Sequence[str], *, grep: str | None = None, labels: Sequence[str] = ()) -> TestPlan:
    """Discover tests without running anything (seed 001 §3.5: metadata is discovery only)."""
    return plan_tests(paths, grep=grep, labels=labels)


def _load_error_results(plan: TestPlan) -> list[TestResult]:
    return [
        TestResult(
            id=err.path or "<eval files>",
            name=err.path or "<eval files>",
            kind=ResultKind.TEST,
            file=(err.path or "").split(":")[0] or None,
            status=TestStatus.ERRORED,
            failure_reason=err.render(),
            duration_ms=0.0,
        )
        for err in plan.loaded.errors
    ]


async def run_eval_files(
    paths: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    listener: RunListener,
    store: Any | None,
    grep: str | None = None,
    labels: Sequence[str] = (),
    resume: str | None = None,
    last_failed: LastFailures | None = None,
) -> RunReport:
    """Load, select and run eval files; every result is stored as it completes.

    Args:
        resume: the id of an interrupted run; its finished results are kept and only the rest run.
        last_failed: `--last-failed`: only the tests it selects (`selection.last_failures`); files that fail
            to load are reported whatever it says.

    Raises:
        NothingSelected: no test is selected (the files register none, or the filters match none): nothing
            runs and no run is stored.
    """
    options.check()
    previous: list[TestResult] = []
    if resume is not None:
        if store is None:
            raise InputError("--resume needs the store (--db PATH)")
        record = store.get_run(resume)
        if record is None:
            raise InputError(f"no run {resume!r} in the store", hint="list runs with: sredrill runs list")
        started_at = record.started_at
        done = store.completed_ids(resume)
        previous = [r for r in store.results(resume) if r.id in done]
        run_id = resume
    else:
        run_id = new_run_id()
        started_at = datetime.now(UTC)
    plan = plan_tests(paths, grep=grep, labels=labels)
    selected = plan.tests
    if last_failed is not None and last_failed.ids:
        selected = [t for t in selected if last_failed.selects(t.id, t.file)]
    errors = _load_error_results(plan)
    if not selected and not errors:
        filters = ([f"--grep {grep!r}"] if grep else []) + [f"--label {label!r}" for label in labels]
        where = ", ".join(str(p) for p in paths)
        raise nothing_selected(
            f"test of {where} ({len(plan.loaded.tests)} loaded)",
            filters,
            last_failed,
            empty=f"{where} register(s) no tests (decorate async functions with @test(...))",
        )
    tests = [t for t in selected if t.id not in {r.id for r in previous}]
    preset = [r for r in errors if r.id not in {p.id for p in previous}]

    # The tests' own code (bodies, hooks, fixtures, a `py:` agent) runs in body workers, never here
    # (DESIGN §11.3); the first starts now, so a bad --agent is a usage error before the run begins.
    from .body_workers import BodyInit, BodyWorkers

    workers = BodyWorkers(
        BodyInit(
            paths=[str(p) for p in paths],
            run_id=run_id,
            agent=settings.agent,
            base_url=settings.base_url,
            api_key=settings.api_key,
            judge_base_url=settings.judge_base_url,
            judge_model=settings.judge_model,
            judge_api_key=settings.judge_api_key or settings.api_key,
            skip_judge=settings.skip_judge,
            db=str(store.path) if store is not None and str(store.path) != ":memory:" else None,
        ),
        tests,
        jobs=options.jobs,
    )
    try:
        if tests:
            await workers.start()
        elif settings.agent:
            from sredrill.agents.spec import parse_agent_spec

            parse_agent_spec(settings.agent)
        runtime = Runtime(
            run_id=run_id,
            agent=None,
            judge=JudgeConfig(
                base_url=settings.judge_base_url,
                model=settings.judge_model,
                api_key=settings.judge_api_key or settings.api_key,
                skip=settings.skip_judge,
            ),
            evaluators=dict(plan.loaded.evaluators),
            store=store,
        )
        if store is not None and resume is None:
            store.begin_run(
                run_id,
                kind="test",
                agent=settings.agent,
                mode=None,
                started_at=started_at,
                config={
                    "paths": [str(Path(p)) for p in paths],
                    "grep": grep,
                    "labels": list(labels),
                    "jobs": options.jobs,
                    "retries": options.retries,
                    "repeat": options.repeat,
                    "timeout": options.timeout_s,
                    "maxfail": options.maxfail,
                    "last_failed": last_failed.config() if last_failed is not None else None,
                },
            )
        return await execute(
            tests,
            runtime,
            options,
            listener=listener,
            store=store,
            title=f"sredrill test · {len(tests)} test(s)",
            preset=preset,
            previous=previous,
            agent=settings.agent,
            started_at=started_at,
            executor=workers,
        )
    finally:
        await workers.aclose()


async def run_packs(
    packs: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    listener: RunListener,
    store: Any | None,
    mode: str | None = None,
    axis2: bool = False,
    scenario_ids: Sequence[str] = (),
    difficulty: str | Sequence[int] | None = None,
    blind: bool = True,
    seed: int | None = None,
    resume: str | None = None,
    last_failed: LastFailures | None = None,
    seeds: str | Sequence[int] | None = None,
    episode_key: str | None = None,
) -> RunReport:
    """What `sredrill run` does: scenario packs against one agent, graded, stored, reported.

    Args:
        packs: built-in pack names or paths; empty = every built-in pack.
        mode: the evidence backend (`full`, `selective`, `temporal`); `axis2` runs full and selective.
        scenario_ids: RCA scenarios (folder or `pack/folder`) and incident tasks (`easy_cpu_spike`,
            `incidents/easy_cpu_spike`, one episode `easy_cpu_spike#seed2`); empty = all. A kind none of the
            ids names does not run.
        difficulty: levels to keep (`"1,2"`): RCA scenarios' 1-4, incident tasks' own 1-3.
        blind: False serves the raw alert (`--no-blind`): only for debugging a pack.
        seed: for seeded agents (`random`).
        resume: the id of an interrupted run to continue.
        last_failed: `--last-failed`: only the tests it selects (`selection.last_failures`).
        seeds: `--seeds` (`"A-B"`, `"A"`, `"A-B,C"` or a list): the seeds every task of the incidents pack
            plays; None: its defaults (classic tasks 0-4, families the first evaluation seeds).
        episode_key: the secret that keys the families' episodes (`incident_tests`); None: a fresh one for
            this run. It is stored with the run, so `resume` replays the same episodes (a resumed run always
            uses its stored key), and it is never reported or shown to the agent.

    Raises:
        InputError: an unknown pack, scenario id, mode, difficulty, seed or episode key (before anything runs).
        NothingSelected: the filters select no scenario and no episode: nothing runs, no run is stored.
    """
    from sredrill.scenarios import builtin_pack_names, load_pack

    from .incident_suite import INCIDENTS_PACK, decorate_incident, incident_tests
    from .rca import axes_for, decorate_rca, pack_error_results, rca_tests
    from .selection import check_seeds_have_incidents, parse_seeds, select_scenario_ids

    options.check()
    names = list(dict.fromkeys(packs)) or [*builtin_pack_names(), INCIDENTS_PACK]
    played_seeds = parse_seeds(seeds)
    check_seeds_have_incidents(played_seeds, with_incidents=INCIDENTS_PACK in names)
    loaded = [load_pack(n) for n in names if n != INCIDENTS_PACK]
    axes = axes_for(mode, axis2)
    # An unknown id is a usage error before anything runs; each kind runs only what the ids name.
    chosen = select_scenario_ids(scenario_ids, packs=loaded, with_incidents=INCIDENTS_PACK in names, seeds=played_seeds)
    levels = parse_difficulties(difficulty)
    timeout_s = options.timeout_s or 120.0
    tests: list[TestDef] = []
    preset: list[TestResult] = []
    if chosen.runs_rca:
        tests += rca_tests(
            loaded, axes, blind=blind, scenario_ids=chosen.rca_ids, difficulties=levels, timeout_s=timeout_s
        )
        preset += pack_error_results(loaded, axes, scenario_ids=chosen.rca_ids)
    key = _episode_key(episode_key, store, resume)
    if INCIDENTS_PACK in names and chosen.runs_incidents:
        tests += incident_tests(
            episodes=chosen.episodes, difficulties=levels, seeds=played_seeds, episode_key=key, timeout_s=timeout_s
        )
    if last_failed is not None and last_failed.ids:
        tests = [t for t in tests if last_failed.selects(t.id, None)]  # load errors are reported regardless
    if not tests and not preset:
        filters = [f"--scenario {sid}" for sid in scenario_ids]
        filters += [f"--difficulty {','.join(map(str, levels))}"] if levels else []
        filters += [f"--seeds {seeds}"] if isinstance(seeds, str) and played_seeds else []
        raise nothing_selected(
            "scenario or incident episode of " + ", ".join(names),
            filters,
            last_failed,
            empty=f"{', '.join(names)} hold(s) no scenario or incident episode",
        )
    previous: list[TestResult] = []
    if resume is not None:
        if store is None or store.get_run(resume) is None:
            raise InputError(f"no run {resume!r} in the store", hint="list runs with: sredrill runs list")
        record = store.get_run(resume)
        done = store.completed_ids(resume)
        previous = [r for r in store.results(resume) if r.id in done]
        run_id, started_at = resume, record.started_at
    else:
        run_id, started_at = new_run_id(), datetime.now(UTC)
    done_ids = {r.id for r in previous}
    tests = [t for t in tests if t.id not in done_ids]
    preset = [r for r in preset if r.id not in done_ids]

    agent_spec = settings.agent or "reference"
    from sredrill.agents.spec import resolve_agent

    agent = resolve_agent(agent_spec, base_url=settings.base_url, api_key=settings.api_key, packs=loaded, seed=seed)
    # The header says what ran: an incidents-only run has no evidence backend, and lists no RCA pack.
    mode_label = ("axis2" if axis2 else axes[0].mode.value) if chosen.runs_rca and loaded else None
    ran = [n for n in names if (chosen.runs_incidents if n == INCIDENTS_PACK else chosen.runs_rca)]
    runtime = Runtime(run_id=run_id, agent=agent, judge=JudgeConfig(skip=True), store=store)
    if store is not None and resume is None:
        store.begin_run(
            run_id,
            kind="run",
            agent=agent_spec,
            mode=mode_label,
            started_at=started_at,
            config={
                "packs": names,
                "mode": mode,
                "axis2": axis2,
                "scenarios": list(scenario_ids),
                "difficulty": levels,
                "blind": blind,
                "seed": seed,
                "seeds": list(played_seeds) if played_seeds is not None else None,
                "jobs": options.jobs,
                "repeat": options.repeat,
                "retries": options.retries,
                "timeout": options.timeout_s,
                "maxfail": options.maxfail,
                "last_failed": last_failed.config() if last_failed is not None else None,
                "episode_key": key,
            },
        )
    title = " · ".join(["sredrill run", ", ".join(ran or names), agent_spec, *([mode_label] if mode_label else [])])
    return await execute(
        tests,
        runtime,
        options,
        listener=listener,
        store=store,
        title=title,
        preset=preset,
        previous=previous,
        decorate=lambda ctx, result: (
            decorate_incident(ctx, result) if ctx.test.file == INCIDENTS_PACK else decorate_rca(ctx, result)
        ),
        agent=agent_spec,
        mode=mode_label,
        started_at=started_at,
    )


def _episode_key(given: str | None, store: Any | None, resume: str | None) -> str | None:
    """The run's episode key: a resumed run's stored one (None: a run stored before keys, played unkeyed),
    else the given one, else a fresh secret."""
    import secrets

    from sredrill.incidents.families import check_key

    if resume is not None and store is not None and (record := store.get_run(resume)) is not None:
        stored = record.config.get("episode_key")
        return stored if isinstance(stored, str) else None
    return check_key(given) or secrets.token_hex(16)


BASELINE_AGENTS = ("majority", "keyword", "random", "reference")


class _Silent:
    """A listener that reports nothing (the baselines table is printed at the end)."""

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


async def run_baselines(
    packs: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    store: Any | None,
    seed: int | None = 0,
    agents: Sequence[str] = BASELINE_AGENTS,
    seeds: str | Sequence[int] | None = None,
    episode_key: str | None = None,
) -> list[RunReport]:
    """Every naive baseline and the reference agent on the same packs (Axis 1, full backend), one run each.

    A benchmark that a constant guess or the alert title alone can pass is caught here (DESIGN §9).
    `seeds` is `--seeds` for the incidents pack (see `run_packs`); every agent plays the same episodes (one
    episode key for all of them, unless `episode_key` is given).
    """
    import secrets
    from dataclasses import replace

    from sredrill.incidents.families import check_key

    key = check_key(episode_key) or secrets.token_hex(16)
    reports = []
    for spec in agents:
        reports.append(
            await run_packs(
                packs,
                settings=replace(settings, agent=spec),
                options=options,
                listener=_Silent(),
                store=store,
                seed=seed,
                seeds=seeds,
                episode_key=key,
            )
        )
    return reports


def run(
    packs: Sequence[str] = (),
    *,
    agent: str = "reference",
    mode: str | None = None,
    axis2: bool = False,
    jobs: int = 1,
    repeat: int = 1,
    db: str | None = None,
    listener: RunListener | None = None,
    scenarios: Sequence[str] = (),
    difficulty: str | Sequence[int] | None = None,
    maxfail: int | None = None,
    seeds: str | Sequence[int] | None = None,
    episode_key: str | None = None,
) -> RunReport:
    """What `sredrill run` does, from Python: run packs against an agent and return the RunReport.

    Args:
        packs: built-in pack names or pack folders; empty = every built-in pack.
        agent: an agent spec (`reference`, `py:module:attr`, `cmd:COMMAND`, …).
        mode: `full`, `selective` or `temporal`; `axis2=True` runs full and selective.
        jobs: scenarios run side by side.
        repeat: runs per scenario (pass@k, pass^k).
        db: a SQLite store to keep the run in; None keeps nothing.
        scenarios: only these RCA scenarios and incident tasks (as `--scenario`).
        difficulty: only these levels (as `--difficulty`: `"1,2"` or `[1, 2]`).
        maxfail: stop starting scenarios after this many failed or errored ones (as `--maxfail`).
        seeds: the incidents pack's seeds (as `--seeds`: `"100000-100009"` or a list of ints).
        episode_key: the secret that keys the families' episodes (pass the same one to play the same
            episodes in two runs); None: a fresh one.

    Raises:
        InputError: a bad pack, scenario, option, agent spec or episode key.
        NothingSelected: the filters select nothing.

    Examples:
        >>> report = sredrill.run(["rds_postgres"], agent="reference", axis2=True)
        >>> report.summary.rca.gap.overall
    """
    store = None
    if db is not None:
        from sredrill.store import Store

        store = Store(db)
    return run_sync(
        run_packs(
            packs,
            settings=Settings(agent=agent),
            options=RunOptions(jobs=jobs, repeat=repeat, maxfail=maxfail),
            listener=listener or _Silent(),
            store=store,
            mode=mode,
            axis2=axis2,
            scenario_ids=scenarios,
            difficulty=difficulty,
            seeds=seeds,
            episode_key=episode_key,
        )
    )


def run_sync(coro: Any) -> Any:
    """Run an engine coroutine to completion from synchronous code (the CLI, `sredrill.run`).

    The value is passed out through a box, not as the main task's result: on 3.11 asyncio.run's
    signal-handler cleanup formats the main task's repr, result included, and a RunReport of thousands of
    results took a third of a second to repr, twice.
    """
    import asyncio

    box: list[Any] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]
