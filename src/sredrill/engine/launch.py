"""Starting and resuming a run from its plan: the one run skeleton behind `sredrill run`, `sredrill test`,
`sredrill.run` and the runs API.

`start_run(plan)` and `resume_run(run_id)` (which reads the stored plan) select the plan's tests (scenario
packs and incident episodes, or eval files), leave out those a resumed run has results for, begin the run in
the store with its plan, and `execute` it. Only what differs by kind is apart: how tests are chosen, and what
runs their attempts (this process with the resolved agent, or body workers). A generated test's result kind
and fields come from the case it carries (`TestDef.case`), never from its pack's name.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sredrill.errors import InputError, NothingSelected
from sredrill.harness import JudgeConfig, Runtime, TestDef
from sredrill.results import GeneratedSet, ResultKind, RunReport, TestResult, TestStatus

from .config import Settings
from .execute import Executor, RunListener, execute, new_run_id
from .loader import LoadedTests, load_eval_files, select_tests
from .plan import EvalSelection, GeneratedSelection, PackSelection, RunKind, RunPlan, seeds_text, stored_plan
from .prices import load_prices
from .selection import nothing_selected

if TYPE_CHECKING:
    from sredrill.generate import GenerateSpec
    from sredrill.isolation import IsolationPolicy
    from sredrill.scenarios import Pack
    from sredrill.workers import PoolWorker

    from .generated import StreamedSet

__all__ = [
    "TestPlan",
    "generated_pack_of",
    "generated_set",
    "isolation_masks",
    "plan_tests",
    "resume_run",
    "start_run",
    "streamed_set_of",
]

logger = logging.getLogger(__name__)


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


@dataclass(frozen=True, slots=True)
class _Opened:
    """What executes a run's tests once they are chosen: the runtime, and where the attempts run."""

    runtime: Runtime
    title: str
    mode: str | None = None
    """The mode the store and the report show (`axis2`, a backend; None: no evidence backend)."""
    executor: Executor | None = None
    agent_spec: str | None = None
    """The agent that ran, for the isolation the report records (None: the tests' own code only)."""
    isolation: str | None = None
    """The isolation the report records, when not the policy's for `agent_spec` (`recorded_level`)."""


@dataclass(frozen=True, slots=True)
class _Chosen:
    """A plan's tests, and the results that exist without running (load errors); `open` gets them ready."""

    tests: list[TestDef]
    preset: list[TestResult]
    open: Callable[[str, list[TestDef], IsolationPolicy], AbstractAsyncContextManager[_Opened]]
    masked: tuple[Path, ...] = ()
    """What the run's agents must not see besides the store: its pack roots or its eval files' folders."""


def isolation_masks(store: Any | None, *, launch_dir: Path | None = None) -> list[Path]:
    """What no agent of any run may see: the built-in packs, the store's files, `.sredrill/` of the launch
    directory and `~/.sredrill` (a run adds its own packs or eval folders).

    The store's file is created when missing (an empty file is an empty SQLite database): a sandbox masks only
    what exists when an agent starts, and masks the store's whole folder when it holds only the store and its
    companions, so files made there later (the `-wal`, `-shm`) are hidden too.

    Raises:
        InputError: the store's file cannot be created.
    """
    from sredrill.scenarios.loader import BUILTIN_PACKS_DIR

    base = launch_dir if launch_dir is not None else Path.cwd()
    masked = [BUILTIN_PACKS_DIR, base / ".sredrill", Path.home() / ".sredrill"]
    path = getattr(store, "path", None)
    if path is not None and str(path) != ":memory:":
        db = Path(path).absolute()
        _ensure_file(db)
        masked += [db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]
    return masked


def _ensure_file(path: Path) -> None:
    # A Store creates its file when it opens; this covers a store object that has not opened it yet.
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the store's file before the agents start: {exc.strerror}",
            path=str(path),
            hint="pass another file with --db PATH",
        ) from exc


def _policy(plan: RunPlan, masked: Sequence[Path]) -> IsolationPolicy:
    """The plan's isolation resolved for this run, its warning logged (auto fell back to process)."""
    from sredrill.isolation import resolve_isolation

    policy = resolve_isolation(
        plan.isolation, require=plan.require_isolation, network=plan.agent_network, agent_env=plan.agent_env,
        agent_dir=plan.agent_dir, masked=masked,
    )  # fmt: skip
    if policy.warning is not None:
        logger.warning("%s", policy.warning)
    return policy


async def start_run(plan: RunPlan, *, settings: Settings, listener: RunListener, store: Any | None) -> RunReport:
    """Start a run from `plan`: select its tests, store the run with its plan, execute, report.

    Args:
        settings: where the agent and the judge are (endpoints, API keys); the plan's agent spec wins over
            `settings.agent`.
        store: where the run, its plan and each result go as it completes; None keeps nothing.

    Raises:
        InputError: the plan names something that does not exist (a pack, a scenario, an eval file, an agent).
        NothingSelected: the plan selects no test: nothing runs and no run is stored.
    """
    return await _run_plan(
        plan, run_id=new_run_id(), started_at=datetime.now(UTC), previous=[], settings=settings, listener=listener,
        store=store,
    )  # fmt: skip


async def resume_run(
    run_id: str,
    *,
    settings: Settings,
    listener: RunListener,
    store: Any | None,
    jobs: int | None = None,
    kind: RunKind | None = None,
    executor: str | None = None,
) -> RunReport:
    """Continue a stored run from its stored plan: its finished results are kept, only the rest runs.

    The stored plan's choices win (packs, scenarios, eval files, agent, attempts, timeouts, the episode key), so
    the resumed part runs and is graded exactly like the first part.

    Args:
        run_id: the run's exact id (`Store.resolve_run` turns a prefix or `latest` into one).
        settings: where the agent and the judge are (endpoints and keys are never stored).
        jobs: tests side by side this time; None: the plan's.
        kind: the command resuming it (`run`, `test`): a run of the other command is refused with the right one.
        executor: where its workers run this time (`--executor`); None: the plan's.

    Raises:
        InputError: no store, no such run, a plan this sredrill cannot read, or a run of another kind.
    """
    if store is None:
        raise InputError("--resume needs the store (--db PATH)")
    plan, record = stored_plan(store, run_id)
    if kind is not None and plan.kind != kind:
        raise InputError(
            f"run {run_id!r} is a `sredrill {plan.kind}` run, not a `sredrill {kind}` one",
            hint=f"continue it with: sredrill {plan.kind} --resume {run_id}",
        )
    if jobs is not None:
        plan = plan.model_copy(update={"jobs": jobs})
    if executor is not None:
        from .ray_executor import parse_executor

        plan = plan.model_copy(update={"executor": parse_executor(executor)})
    return await _run_plan(
        plan, run_id=run_id, started_at=record.started_at, previous=store.results(run_id), settings=settings,
        listener=listener, store=store,
    )  # fmt: skip


async def _run_plan(
    plan: RunPlan,
    *,
    run_id: str,
    started_at: datetime,
    previous: list[TestResult],
    settings: Settings,
    listener: RunListener,
    store: Any | None,
) -> RunReport:
    from sredrill.isolation import recorded_level, resolve_isolation

    options = plan.options()
    options.check()
    # A wrong prices file is a usage error before anything runs, not a crash at the first priced result.
    prices = load_prices(settings.prices) if settings.prices else None
    # Before anything loads: a level that cannot be had (`--require-isolation`) is a usage error at once.
    resolve_isolation(plan.isolation, require=plan.require_isolation, network=plan.agent_network)
    settings = replace(settings, agent=plan.agent)
    if isinstance(plan.selection, PackSelection):
        chosen = await choose_packs(plan, plan.selection, settings, store)
    else:
        chosen = _choose_eval_files(plan, plan.selection, settings, store)
    done = {r.id for r in previous}
    shard = plan.shard
    tests = [t for t in chosen.tests if t.id not in done and (shard is None or shard.selects(t.id))]
    preset = [r for r in chosen.preset if r.id not in done and (shard is None or shard.selects(r.id))]
    policy = _policy(plan, [*chosen.masked, *isolation_masks(store)])
    async with chosen.open(run_id, tests, policy) as opened:
        if store is not None:
            # A resumed run is begun again: its start time and results stay, it is unfinished until it ends.
            store.begin_run(
                run_id, kind=plan.kind, agent=plan.agent, mode=opened.mode, started_at=started_at,
                config=plan.stored(),
            )  # fmt: skip
        return await execute(
            tests,
            opened.runtime,
            options,
            listener=listener,
            store=store,
            title=opened.title + (f" · shard {shard.text()}" if shard is not None else ""),
            preset=preset,
            previous=previous,
            agent=plan.agent,
            mode=opened.mode,
            started_at=started_at,
            executor=opened.executor,
            isolation=opened.isolation or recorded_level(policy, opened.agent_spec or ""),
            generated=generated_set(plan),
            prices=prices,
        )


def generated_set(plan: RunPlan) -> GeneratedSet | None:
    """What a report records of the plan's generated set (`--generate`), or None."""
    chosen = plan.selection.generated if isinstance(plan.selection, PackSelection) else None
    if chosen is None:
        return None
    from sredrill.generate import parse_generate_spec

    seed = parse_generate_spec(chosen.spec).seed
    return GeneratedSet(spec=chosen.spec, generator=chosen.generator, version=chosen.version, seed=seed)


def _choose_eval_files(plan: RunPlan, selection: EvalSelection, settings: Settings, store: Any | None) -> _Chosen:
    chosen = plan_tests(selection.paths, grep=selection.grep, labels=selection.labels)
    last_failed = plan.last_failed.failures() if plan.last_failed is not None else None
    selected = chosen.tests
    if last_failed is not None:
        selected = [t for t in selected if last_failed.selects(t.id, t.file)]
    errors = _load_error_results(chosen)
    if not selected and not errors:
        filters = ([f"--grep {selection.grep!r}"] if selection.grep else []) + [
            f"--label {label!r}" for label in selection.labels
        ]
        where = ", ".join(selection.paths)
        raise nothing_selected(
            f"test of {where} ({len(chosen.loaded.tests)} loaded)",
            filters,
            last_failed,
            empty=f"{where} register(s) no tests (decorate async functions with @test(...))",
        )

    @asynccontextmanager
    async def open_workers(run_id: str, tests: list[TestDef], policy: IsolationPolicy) -> AsyncIterator[_Opened]:
        # The tests' own code (bodies, hooks, fixtures, a `py:` agent) runs in body workers, never here
        # (DESIGN §11.3); the first starts now, so a bad --agent is a usage error before the run begins.

        from .body_workers import BodyInit, BodyWorkers

        judge_api_key = settings.judge_api_key or settings.api_key
        db = str(store.path) if store is not None and str(store.path) != ":memory:" else None
        # The body workers grade (they hold the tests' scenarios and expectations), so they are never isolated
        # themselves: the agents they start are (a `cmd:` agent, or the agent worker of a `py:` one).
        # On Ray, one actor per --jobs slot up to the cluster's CPUs (more would wait for a CPU that never frees).
        with _executor(plan.executor) as (make_worker, cpus, _):
            workers = BodyWorkers(
                BodyInit(
                    paths=list(selection.paths), run_id=run_id, agent=settings.agent,
                    base_url=settings.base_url, api_key=settings.api_key, judge_base_url=settings.judge_base_url,
                    judge_model=settings.judge_model, judge_api_key=judge_api_key, skip_judge=plan.skip_judge,
                    db=db,
                ),
                tests,
                jobs=plan.jobs if make_worker is None else min(plan.jobs, cpus),
                isolation=policy,
                make_worker=make_worker,
            )  # fmt: skip
            try:
                if tests:
                    await workers.start()
                elif settings.agent:
                    from sredrill.agents.spec import parse_agent_spec

                    parse_agent_spec(settings.agent)
                judge = JudgeConfig(
                    base_url=settings.judge_base_url, model=settings.judge_model, api_key=judge_api_key,
                    skip=plan.skip_judge,
                )  # fmt: skip
                evaluators = dict(chosen.loaded.evaluators)
                runtime = Runtime(run_id=run_id, agent=None, judge=judge, evaluators=evaluators, store=store)
                yield _Opened(
                    runtime=runtime, executor=workers,
                    title=f"sredrill test · {len(tests)} test(s)" + (" · Ray actors" if make_worker else ""),
                    agent_spec=settings.agent,
                )  # fmt: skip
            finally:
                await workers.aclose()

    return _Chosen(tests=selected, preset=errors, open=open_workers, masked=_eval_masks(plan, selection, chosen))


@contextmanager
def _executor(executor: str) -> Iterator[tuple[Callable[[str], PoolWorker] | None, int, str]]:
    """Where a run's workers live: (a factory, None for processes here; the CPUs they may use; what to call it).
    A Ray cluster is joined (or started) for the block, and let go after it if the run started it.

    Raises:
        MissingExtra: `ray` without the ray extra.
        InputError: nothing answers at the Ray address.
    """
    from .ray_executor import is_ray, local_cpus, ray_cluster

    if not is_ray(executor):
        yield None, local_cpus(), "this machine"
        return
    with ray_cluster(executor) as cluster:
        where = f"the Ray cluster at {executor.partition(':')[2]}" if ":" in executor else "the Ray cluster"
        yield cluster.make, cluster.cpus(), where


def _eval_masks(plan: RunPlan, selection: EvalSelection, chosen: TestPlan) -> tuple[Path, ...]:
    """What agents must not see of a test run: the eval files' folders, or the eval files themselves where their
    folder holds the agent's code (eval files next to the project's code, run from there)."""
    code = Path(plan.agent_dir or ".").resolve()
    files = [Path(t.file).resolve() for t in chosen.loaded.tests if t.file]
    masked: list[Path] = []
    for given in (Path(p).resolve() for p in selection.paths):
        folder = given if given.is_dir() else given.parent
        if not code.is_relative_to(folder):
            masked.append(folder)
        elif given.is_dir():
            masked += [f for f in files if f.is_relative_to(folder)]
        else:
            masked.append(given)
    return tuple(dict.fromkeys(masked))


async def choose_packs(plan: RunPlan, selection: PackSelection, settings: Settings, store: Any | None) -> _Chosen:
    from sredrill.scenarios import load_pack

    from .incident_suite import INCIDENTS_PACK, incident_tests
    from .rca import axes_for, pack_error_results, rca_tests, streamed_rca_tests
    from .selection import Listed, check_seeds_have_incidents, select_scenario_ids

    names, seeds, levels = list(selection.packs), selection.seeds, list(selection.difficulties)
    with_incidents = INCIDENTS_PACK in names
    check_seeds_have_incidents(seeds, with_incidents=with_incidents)
    loaded = [load_pack(n) for n in names if n != INCIDENTS_PACK]
    # What agents must not see: the packs' folders. A generated set has none: its scenarios and answer keys
    # exist only in this process's memory (DESIGN §11.3), so there is nothing of it to mask.
    masked = tuple(p.root for p in loaded)
    # A generated set is listed, not loaded: each test makes its own scenario (a run of any count holds a few).
    streamed = streamed_set_of(selection.generated) if selection.generated is not None else None
    if streamed is not None:
        logger.info("listing the %d scenarios of %s (each made once, then dropped)", streamed.spec.count, streamed)
        await streamed.list_entries()
    listed: list[Listed] = [*loaded, *([streamed] if streamed is not None else [])]
    # What agents are built from (a pack's name, domain and vocabulary): the set's pack holds no scenario.
    agent_packs = [*loaded, *([streamed.pack] if streamed is not None else [])]
    if streamed is not None:
        names.append(streamed.name)
    axes = axes_for(selection.mode, selection.axis2)
    # An unknown id is a usage error before anything runs; each kind runs only what the ids name.
    chosen = select_scenario_ids(selection.scenarios, packs=listed, with_incidents=with_incidents, seeds=seeds)
    timeout_s = plan.timeout_s or 120.0
    tests: list[TestDef] = []
    preset: list[TestResult] = []
    if chosen.runs_rca:
        tests += rca_tests(
            loaded, axes, blind=selection.blind, scenario_ids=chosen.rca_ids, difficulties=levels, timeout_s=timeout_s
        )
        if streamed is not None:
            tests += streamed_rca_tests(
                streamed, axes, blind=selection.blind, scenario_ids=chosen.rca_ids, difficulties=levels,
                timeout_s=timeout_s,
            )  # fmt: skip
        preset += pack_error_results(loaded, axes, scenario_ids=chosen.rca_ids)
    if with_incidents and chosen.runs_incidents:
        tests += incident_tests(
            episodes=chosen.episodes, difficulties=levels, seeds=seeds, episode_key=plan.key(), timeout_s=timeout_s
        )
    last_failed = plan.last_failed.failures() if plan.last_failed is not None else None
    if last_failed is not None:
        tests = [t for t in tests if last_failed.selects(t.id, None)]  # load errors are reported regardless
    if not tests and not preset:
        filters = [f"--scenario {sid}" for sid in selection.scenarios]
        filters += [f"--difficulty {','.join(map(str, levels))}"] if levels else []
        filters += [f"--seeds {seeds_text(seeds)}"] if seeds else []
        raise nothing_selected(
            "scenario or incident episode of " + ", ".join(names),
            filters,
            last_failed,
            empty=f"{', '.join(names)} hold(s) no scenario or incident episode",
        )
    agent_spec = plan.agent or "reference"
    # The header says what ran: an incidents-only run has no evidence backend, and lists no RCA pack.
    mode = ("axis2" if selection.axis2 else axes[0].mode.value) if chosen.runs_rca and listed else None
    # A test's id starts with its pack's name (`rds_postgres/001-…#1`, `incidents/…#seed0`): a pack none of the
    # selected tests is from did not run (`--scenario 001-replication-lag` runs no k8s scenario).
    selected = {t.id.partition("/")[0] for t in tests}
    ran = [n for n in names if n in selected and (chosen.runs_incidents if n == INCIDENTS_PACK else chosen.runs_rca)]
    title = " · ".join(["sredrill run", ", ".join(ran or names), agent_spec, *([mode] if mode else [])])

    @asynccontextmanager
    async def open_agent(run_id: str, tests: list[TestDef], policy: IsolationPolicy) -> AsyncIterator[_Opened]:
        from sredrill.agents.spec import resolve_agent

        if (plan.workers != 1 or plan.executor != "local") and tests:
            from .body_workers import PACK_HANDLER, BodyWorkers, PackInit

            # The episodes play in N pack workers (`pack_workers.PackHandler`: processes here, or Ray actors),
            # each with its own agent, one attempt at a time; the first starts now, so a bad --agent is a usage
            # error before the run begins.
            init = PackInit(plan=plan.stored(), run_id=run_id, base_url=settings.base_url, api_key=settings.api_key)
            with _executor(plan.executor) as (make_worker, cpus, where):
                count = plan.workers or cpus
                if count > cpus and make_worker is not None:
                    raise InputError(
                        f"{count} workers need {count} CPUs (one Ray actor each); {where} has {cpus}",
                        field="--workers",
                        hint=f"--workers {cpus}, or leave --workers out: one actor per CPU of the cluster",
                    )
                workers = BodyWorkers(
                    init, tests, jobs=count, isolation=policy, handler=PACK_HANDLER, make_worker=make_worker
                )
                try:
                    await workers.start()
                    kind = "Ray actors" if make_worker is not None else "workers"
                    yield _Opened(
                        runtime=Runtime(run_id=run_id, agent=None, judge=JudgeConfig(skip=True), store=store),
                        title=f"{title} · {count} {kind}", mode=mode, agent_spec=agent_spec, executor=workers,
                    )  # fmt: skip
                finally:
                    await workers.aclose()
            return

        agent = resolve_agent(
            agent_spec, base_url=settings.base_url, api_key=settings.api_key, packs=agent_packs, seed=selection.seed,
            isolation=policy,
        )  # fmt: skip
        yield _Opened(
            runtime=Runtime(run_id=run_id, agent=agent, judge=JudgeConfig(skip=True), store=store),
            title=title,
            mode=mode,
            agent_spec=agent_spec,
        )

    return _Chosen(tests=tests, preset=preset, open=open_agent, masked=masked)


def generated_pack_of(chosen: GeneratedSelection) -> Pack:
    """The generated set of a plan, made again in memory, every scenario loaded at once; refused when its
    generator's version changed (see `streamed_set_of`, what a run plays).

    Raises:
        InputError: the spec does not parse, its generator is unknown, or its version is not the plan's.
    """
    from sredrill.generate import generated_pack

    return generated_pack(_checked_spec(chosen))


def streamed_set_of(chosen: GeneratedSelection) -> StreamedSet:
    """The generated set of a plan, made again one scenario at a time (each test makes its own); refused when
    its generator's version changed (the same spec would give other scenarios: a resumed run would grade the
    rest on another set).

    Raises:
        InputError: the spec does not parse, its generator is unknown, or its version is not the plan's.
    """
    from .generated import StreamedSet

    return StreamedSet(_checked_spec(chosen))


def _checked_spec(chosen: GeneratedSelection) -> GenerateSpec:
    from sredrill.generate import generator_for, parse_generate_spec

    spec = parse_generate_spec(chosen.spec)
    version = generator_for(spec.domain).version
    if version != chosen.version:
        raise InputError(
            f"generated set {chosen.spec!r} was made by generator {chosen.generator} version {chosen.version!r}; "
            f"this sredrill's is {version!r}, which makes other scenarios from the same spec",
            field="--generate",
            hint="start a new run (sredrill run --generate SPEC), or use the sredrill that started this one",
        )
    return spec
