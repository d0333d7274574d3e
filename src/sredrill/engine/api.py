"""What `sredrill run`, `sredrill test` and `sredrill list` do, callable from Python and the server alike.

Each command's arguments become a `RunPlan` (`pack_plan`, `eval_plan`), which the one run skeleton starts
(`launch.start_run`) or, given a run id, resumes from the stored plan (`launch.resume_run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sredrill.errors import InputError
from sredrill.evidence import BackendMode
from sredrill.incidents.families import episode_key as new_episode_key
from sredrill.results import RunReport, TestResult

from .config import Settings
from .execute import RunListener, RunOptions
from .launch import TestPlan, plan_tests, resume_run, start_run
from .plan import (
    EvalSelection,
    GeneratedSelection,
    IsolationRequest,
    LastFailedSelection,
    PackSelection,
    RunPlan,
    Shard,
)
from .ray_executor import is_ray, parse_executor
from .selection import LastFailures, parse_difficulties

__all__ = [
    "BASELINE_AGENTS",
    "NotRun",
    "TestPlan",
    "eval_plan",
    "generated_selection",
    "isolation_request",
    "list_tests",
    "pack_plan",
    "plan_tests",
    "resume_run",
    "run",
    "run_baselines",
    "run_eval_files",
    "run_packs",
    "run_sync",
    "start_run",
]


def list_tests(paths: Sequence[str], *, grep: str | None = None, labels: Sequence[str] = ()) -> TestPlan:
    """Discover tests without running anything (seed 001 §3.5: metadata is discovery only)."""
    return plan_tests(paths, grep=grep, labels=labels)


# -- the plans of `sredrill test` and `sredrill run` -------------------------------------------------------


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
    isolation: IsolationRequest | None = None,
    shard: str | None = None,
    executor: str | None = None,
) -> RunReport:
    """Load, select and run eval files; every result is stored as it completes.

    Args:
        resume: the id of an interrupted run; its finished results are kept and only the rest runs, as its
            stored plan says (`paths`, `grep`, `labels`, `last_failed` and `options` but `jobs` are the plan's).
        last_failed: `--last-failed`: only the tests it selects (`selection.last_failures`); files that fail
            to load are reported whatever it says.
        isolation: how the agent and the test bodies are isolated (`--isolation` and its flags); None: `auto`.
        shard: `--shard K/N`: only the selected tests whose id hashes to part K of N (`plan.Shard`).
        executor: where the body workers run (`--executor`): `local` (None), `ray` or `ray:HOST:PORT` (one Ray
            actor per `--jobs` slot, up to the cluster's CPUs); on `resume`, None keeps the run's own.

    Raises:
        NothingSelected: no test is selected (the files register none, or the filters match none): nothing
            runs and no run is stored.
    """
    if resume is not None:
        return await resume_run(
            resume, settings=settings, listener=listener, store=store, jobs=options.jobs, kind="test",
            executor=executor,
        )  # fmt: skip
    plan = eval_plan(
        paths, settings=settings, options=options, grep=grep, labels=labels, last_failed=last_failed,
        isolation=isolation, shard=shard, executor=executor,
    )  # fmt: skip
    return await start_run(plan, settings=settings, listener=listener, store=store)


def eval_plan(
    paths: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    grep: str | None = None,
    labels: Sequence[str] = (),
    last_failed: LastFailures | None = None,
    isolation: IsolationRequest | None = None,
    shard: str | None = None,
    executor: str | None = None,
) -> RunPlan:
    """The plan of `sredrill test PATH…` (see `run_eval_files` for the arguments).

    Raises:
        InputError: an option out of range (naming its flag), or no path.
    """
    if not paths:
        raise InputError("no eval files given", hint="usage: sredrill test PATH… (files or folders)")
    return RunPlan.with_options(
        options,
        selection=EvalSelection(paths=tuple(str(Path(p)) for p in paths), grep=grep, labels=tuple(labels)),
        agent=settings.agent,
        skip_judge=settings.skip_judge,
        last_failed=LastFailedSelection.of(last_failed),
        shard=Shard.parse(shard) if shard is not None else None,
        executor=parse_executor(executor or "local"),
        **(isolation or IsolationRequest()).model_dump(),
    )


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
    isolation: IsolationRequest | None = None,
    generate: str | None = None,
    shard: str | None = None,
    workers: int | None = None,
    executor: str | None = None,
) -> RunReport:
    """What `sredrill run` does: scenario packs against one agent, graded, stored, reported.

    Args:
        packs: built-in pack names or paths; empty = every built-in pack (none when `generate` is given).
        mode: the evidence backend (`full`, `selective`, `temporal`); `axis2` runs full and selective.
        scenario_ids: RCA scenarios (folder or `pack/folder`) and incident tasks (`easy_cpu_spike`,
            `incidents/easy_cpu_spike`, one episode `easy_cpu_spike#seed2`); empty = all. A kind none of the
            ids names does not run.
        difficulty: levels to keep (`"1,2"`): RCA scenarios' 1-4, incident tasks' own 1-3.
        blind: False serves the raw alert (`--no-blind`): only for debugging a pack.
        seed: for seeded agents (`random`).
        resume: the id of an interrupted run to continue, as its stored plan says (every argument above and
            `options` but `jobs` are the plan's; so is the agent).
        last_failed: `--last-failed`: only the tests it selects (`selection.last_failures`).
        seeds: `--seeds` (`"A-B"`, `"A"`, `"A-B,C"` or a list): the seeds every task of the incidents pack
            plays; None: its defaults (classic tasks 0-4, families the first evaluation seeds).
        episode_key: the secret that keys the families' episodes (`incident_tests`); None: a fresh one for
            this run. It is stored with the run, so `resume` replays the same episodes (a resumed run always
            uses its stored key), and it is never reported or shown to the agent.
        isolation: how the agent is isolated (`--isolation` and its flags); None: `auto`.
        generate: a generated set to run besides the packs (`--generate rds:seed=S:count=N`,
            `sredrill.generate.parse_generate_spec`): made in memory, nothing written; the run records its spec
            and generator version.
        shard: `--shard K/N`: only the selected scenarios and episodes whose test id hashes to part K of N;
            `sredrill runs merge` joins the parts' runs. With the incidents pack it needs `episode_key`, so every
            part plays the same episodes.
        workers: processes the episodes play in (`--workers`); 1: this one. Grading and a built-in agent are
            CPU-bound: N workers use N cores, one attempt at a time each; 0: one per CPU of the executor. None:
            1 on the local executor, one per CPU on Ray.
        executor: where the workers run (`--executor`): `local` (None: processes on this machine), `ray` or
            `ray:HOST:PORT` (Ray actors, the `ray` extra); on `resume`, None keeps the run's own.

    Raises:
        InputError: an unknown pack, scenario id, mode, difficulty, seed or episode key, or a bad generate spec
            (before anything runs).
        NothingSelected: the filters select no scenario and no episode: nothing runs, no run is stored.
    """
    if resume is not None:
        return await resume_run(
            resume, settings=settings, listener=listener, store=store, jobs=options.jobs, kind="run",
            executor=executor,
        )  # fmt: skip
    plan = pack_plan(
        packs, settings=settings, options=options, mode=mode, axis2=axis2, scenario_ids=scenario_ids,
        difficulty=difficulty, blind=blind, seed=seed, last_failed=last_failed, seeds=seeds,
        episode_key=episode_key, isolation=isolation, generate=generate, shard=shard, workers=workers,
        executor=executor,
    )  # fmt: skip
    return await start_run(plan, settings=settings, listener=listener, store=store)


def pack_plan(
    packs: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    mode: str | None = None,
    axis2: bool = False,
    scenario_ids: Sequence[str] = (),
    difficulty: str | Sequence[int] | None = None,
    blind: bool = True,
    seed: int | None = None,
    last_failed: LastFailures | None = None,
    seeds: str | Sequence[int] | None = None,
    episode_key: str | None = None,
    isolation: IsolationRequest | None = None,
    generate: str | None = None,
    shard: str | None = None,
    workers: int | None = None,
    executor: str | None = None,
) -> RunPlan:
    """The plan of `sredrill run` (see `run_packs` for the arguments): a fresh episode key unless one is given.

    Raises:
        InputError: a bad mode, difficulty, seed, episode key, generate spec or option (naming its flag).
    """
    from sredrill.scenarios import builtin_pack_names

    from .incident_suite import INCIDENTS_PACK
    from .rca import axes_for
    from .selection import parse_seeds

    options.check()
    axes_for(mode, axis2)  # a bad --mode or --mode with --axis2: named before anything loads
    played = parse_seeds(seeds)
    generated = generated_selection(generate) if generate is not None else None
    default = () if generated is not None else (*builtin_pack_names(), INCIDENTS_PACK)
    chosen = tuple(dict.fromkeys(packs)) or default
    where = parse_executor(executor or "local")
    if workers is None:
        workers = 0 if is_ray(where) else 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InputError(f"--workers must be a whole number ≥ 0, got {workers!r}", field="workers",
                         hint="--workers 1 plays the episodes in this process; --workers N in N processes; "
                         "--workers 0 in one per CPU")  # fmt: skip
    part = Shard.parse(shard) if shard is not None else None
    if part is not None and INCIDENTS_PACK in chosen and episode_key is None:
        # Each run draws a fresh key: the shards would play different episodes, and their merge no run.
        raise InputError(
            f"--shard {part.text()} with the incidents pack needs one episode key for every shard",
            hint="give each shard the same --episode-key-file FILE (a secret of 32+ characters), or leave out "
            "the incidents pack (--pack NAME)",
        )
    return RunPlan.with_options(
        options,
        selection=PackSelection(
            packs=chosen,
            generated=generated,
            mode=None if mode is None else BackendMode(mode),
            axis2=axis2,
            scenarios=tuple(scenario_ids),
            difficulties=tuple(parse_difficulties(difficulty)),
            blind=blind,
            seed=seed,
            seeds=played,
        ),
        agent=settings.agent or "reference",
        last_failed=LastFailedSelection.of(last_failed),
        episode_key=new_episode_key(episode_key),
        shard=part,
        workers=workers,
        executor=where,
        **(isolation or IsolationRequest()).model_dump(),
    )


def generated_selection(text: str) -> GeneratedSelection:
    """What a plan records of `--generate SPEC`: the spec in its one spelling and the generator's version.

    Raises:
        InputError: the spec does not parse, or names a domain without a generator or a fault it does not have.
    """
    from sredrill.generate import check_spec, generator_for, parse_generate_spec

    spec = parse_generate_spec(text)
    generator = generator_for(spec.domain)
    check_spec(spec)
    return GeneratedSelection(spec=spec.text(), generator=spec.domain, version=generator.version)


BASELINE_AGENTS = ("majority", "keyword", "random", "reference")


class _Silent:
    """A listener that reports nothing (the baselines table is printed at the end)."""

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@dataclass(frozen=True, slots=True)
class NotRun:
    """A baseline that could not run on some packs, and why (`majority` on a pack declaring no training split):
    its row says so and the others run."""

    agent: str
    packs: tuple[str, ...]
    """The names of the packs it did not run on, as the tables name them (a folder's name)."""
    reason: str


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
) -> list[RunReport | NotRun]:
    """Every naive baseline and the reference agent on the same packs (Axis 1, full backend), one run each.

    A benchmark that a constant guess or the alert title alone can pass is caught here (DESIGN §9).
    `seeds` is `--seeds` for the incidents pack (see `run_packs`); every agent plays the same episodes (one
    episode key for all of them, unless `episode_key` is given). An agent whose spec cannot be used on a pack
    (`majority` where no training split is declared) runs on the other packs and is reported as `NotRun` on
    that one, after its report (or alone, when it runs on none).

    Raises:
        InputError: a bad pack, option, seed or episode key (an agent's refusal is a `NotRun`, not an error).
    """
    from dataclasses import replace

    key = new_episode_key(episode_key)
    out: list[RunReport | NotRun] = []
    for spec in agents:
        playable, refused = _playable(packs, spec, seed)
        if playable or not refused:
            out.append(
                await run_packs(
                    playable,
                    settings=replace(settings, agent=spec),
                    options=options,
                    listener=_Silent(),
                    store=store,
                    seed=seed,
                    seeds=seeds,
                    episode_key=key,
                )
            )
        out += [NotRun(spec, names, reason) for reason, names in refused.items()]
    return out


def _why(exc: InputError) -> str:
    """A refusal in one line: what is wrong, then how to fix it."""
    return f"{exc.message}; {exc.hint}" if exc.hint else exc.message


def _playable(packs: Sequence[str], spec: str, seed: int | None) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """The packs `spec` can be connected for (all of them when it connects for them together, as a run
    connects it), and the reasons it cannot for the others -> their names. Only the agent's own refusal
    (`AgentSpecError`) is caught: a pack that does not load fails as `run_packs` would."""
    from sredrill.agents.spec import resolve_agent
    from sredrill.errors import AgentSpecError
    from sredrill.scenarios import builtin_pack_names, load_pack

    from .incident_suite import INCIDENTS_PACK

    names = list(dict.fromkeys(packs)) or [*builtin_pack_names(), INCIDENTS_PACK]
    loaded = {n: load_pack(n) for n in names if n != INCIDENTS_PACK}
    try:
        resolve_agent(spec, packs=list(loaded.values()), seed=seed)
        return list(packs), {}
    except AgentSpecError as whole:
        refused: dict[str, tuple[str, ...]] = {}
        playable = []
        for name in names:
            try:
                if name in loaded:
                    resolve_agent(spec, packs=[loaded[name]], seed=seed)
                playable.append(name)
            except AgentSpecError as exc:
                refused[_why(exc)] = (*refused.get(_why(exc), ()), loaded[name].name)
        if not refused:  # no pack alone is refused: it is the packs together
            refused[_why(whole)] = tuple(p.name for p in loaded.values())
            playable = []
        return playable, refused


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
    isolation: str = "auto",
    require_isolation: str | None = None,
    agent_network: str = "none",
    agent_env: Sequence[str] = (),
    agent_dir: str | None = None,
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
        isolation: `auto`, `sandbox`, `process` or `none` (as `--isolation`); `require_isolation`,
            `agent_network`, `agent_env` and `agent_dir` are `--require-isolation`, `--agent-network`,
            `--agent-env` (names) and `--agent-dir`.

    Raises:
        InputError: a bad pack, scenario, option, agent spec, episode key or isolation choice; the level
            required cannot be had (`IsolationUnavailable`).
        NothingSelected: the filters select nothing.

    Examples:
        >>> report = sredrill.run(["rds_postgres"], agent="reference", axis2=True)
        >>> report.summary.rca.gap.overall
    """
    store = None
    if db is not None:
        from sredrill.store import Store

        store = Store(db)
    report: RunReport = run_sync(
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
            isolation=isolation_request(
                isolation, require=require_isolation, network=agent_network, agent_env=agent_env, agent_dir=agent_dir
            ),
        )
    )
    return report


def isolation_request(
    isolation: str | None = None,
    *,
    require: str | None = None,
    network: str | None = None,
    agent_env: Sequence[str] = (),
    agent_dir: str | Path | None = None,
) -> IsolationRequest:
    """The isolation fields of a plan, checked: a bad value names its flag and the allowed values.

    Raises:
        InputError: a level or network that is not one of the allowed values, or an empty `--agent-env` name.
    """
    allowed = {
        "--isolation": ("auto", "sandbox", "process", "none"),
        "--require-isolation": ("sandbox", "process", "none"),
        "--agent-network": ("none", "host"),
    }
    for flag, value in (("--isolation", isolation), ("--require-isolation", require), ("--agent-network", network)):
        if value is not None and value not in allowed[flag]:
            choices = allowed[flag]
            raise InputError(
                f"{flag} {value!r} is not one of {', '.join(choices)}",
                field=flag,
                allowed=list(choices),
                hint=f"pass {flag} {' or '.join(choices)}",
            )
    names = [n.strip() for n in agent_env]
    bad = [n for n in names if not n or "=" in n]
    if bad:
        raise InputError(
            f"--agent-env {bad[0]!r} is not a variable name",
            field="--agent-env",
            hint="pass the name only (--agent-env OPENAI_API_KEY); its value is taken from your environment",
        )
    return IsolationRequest.model_validate(
        {
            "isolation": isolation or "auto",
            "require_isolation": require,
            "agent_network": network or "none",
            "agent_env": tuple(dict.fromkeys(names)),
            "agent_dir": None if agent_dir is None else str(agent_dir),
        }
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
