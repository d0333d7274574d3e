"""The `sredrill` command line: parse, call one layer function, render (STYLE #21).

stdout carries only the result; progress and errors go to stderr. Exit codes (DESIGN §8): 0 all passed,
1 some failed, 2 usage or input error, 3 some errored (wins over 1), 4 internal error (a bug in sredrill),
5 nothing selected (the filters or the eval files select no test: nothing ran, as pytest's 5).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from sredrill import processes
from sredrill.cli_scenarios import scenarios_app
from sredrill.errors import ExitCode, InputError, NothingSelected, StoreError

if TYPE_CHECKING:
    from sredrill.store import Store

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Fire drills for AI SRE agents: benchmark, test and train agents that investigate incidents.",
)
runs_app = typer.Typer(no_args_is_help=True, help="Stored run history: list, show, compare, merge, regrade, delete.")
app.add_typer(runs_app, name="runs")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"sredrill {version('sredrill')}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print sredrill's version and exit."),
    ] = False,
) -> None:
    """Fire drills for AI SRE agents: benchmark, test and train agents that investigate incidents."""


app.add_typer(scenarios_app, name="scenarios")

DbOpt = Annotated[
    str | None,
    typer.Option("--db", help="SQLite store (default: $SREDRILL_DB, the config's db, else .sredrill/sredrill.db)."),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="py:module:attr, cmd:COMMAND, …")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", help="Tests run side by side.")]
ReporterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--reporter",
        help="console, json, junit or html; NAME=PATH writes it to a file; repeatable (at most one on stdout). "
        "The console still prints when every reporter writes a file.",
        metavar="NAME[=PATH]",
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="The file of a single --reporter (as --reporter NAME=PATH)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Same as --reporter json.")]
ExitFirstOpt = Annotated[bool, typer.Option("--exitfirst", "-x", help="Stop at the first failure (--maxfail 1).")]
MaxFailOpt = Annotated[int | None, typer.Option("--maxfail", help="Start no new test after N failed or errored ones.")]
LastFailedOpt = Annotated[
    bool,
    typer.Option(
        "--last-failed", "--lf", help="Only the tests that failed or errored in the last run of this command."
    ),
]
PricesOpt = Annotated[
    str | None,
    typer.Option("--prices", help="TOML or JSON prices per million tokens by model: the cost of the tokens."),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        help="Run part K of N (K/N): the tests whose id hashes there; merge the parts with runs merge.",
        metavar="K/N",
    ),
]
ExecutorOpt = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where the workers run: local (this machine) or ray[:HOST:PORT] (Ray actors; the ray extra).",
        metavar="local|ray[:HOST:PORT]",
    ),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Report more (each test, each check).")]


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(ExitCode.USAGE_ERROR)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """A run or test command: SIGTERM and SIGHUP stop it exactly as Ctrl-C does, and nothing it started lives on.

    The signals are handed to whatever handles SIGINT at that moment: inside `asyncio.run` its handler cancels
    the run, so every test's cleanup (a `cmd:` agent's process group included) runs, finished results stay
    stored and `--resume` continues the run. Every process started under the command inherits a session tag
    in its environment; on the way out those still alive (a grandchild that left its group in a worker that
    was killed) are killed too.
    """
    tag = uuid.uuid4().hex
    outer = os.environ.get(processes.SESSION_TAG)
    os.environ[processes.SESSION_TAG] = tag

    def as_sigint(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job): still stop
            raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # SIGHUP: the terminal closed. Neither signal exists on every platform.
        for sig in (getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)):
            previous[sig] = signal.signal(sig, as_sigint)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        processes.kill_all()
        processes.end_tagged(processes.SESSION_TAG, tag)
        if outer is None:
            os.environ.pop(processes.SESSION_TAG, None)
        else:
            os.environ[processes.SESSION_TAG] = outer


def _guard(fn: Callable[[], int], *, interruptible: bool = False, started: _Started | None = None) -> None:
    """Run a command body: InputError → one `error:` line and exit 2; StoreError (the disk failed; any report
    is printed already) → one `error:` line and exit 3; anything else is a bug → exit 4. Ctrl-C → exit 2,
    naming the run to resume when `started` knows it."""
    # With `interruptible`, SIGTERM and SIGHUP interrupt like Ctrl-C; interrupted or not, no process group
    # sredrill started outlives the command (`sredrill.processes`).
    try:
        with _interruptible() if interruptible else contextlib.nullcontext():
            code = fn()
    except NothingSelected as exc:  # as pytest: not a usage error, and not a pass either
        typer.echo(exc.render(), err=True)
        raise typer.Exit(ExitCode.NOTHING_SELECTED) from None
    except InputError as exc:
        _fail(exc.render())
    except StoreError as exc:
        typer.echo(f"error: {exc.render()}", err=True)
        raise typer.Exit(ExitCode.TESTS_ERRORED) from None
    except KeyboardInterrupt:
        typer.echo(started.interrupted() if started is not None else "interrupted", err=True)
        raise typer.Exit(ExitCode.USAGE_ERROR) from None
    except typer.Exit:
        raise
    except Exception:
        traceback.print_exc()
        typer.echo("error: internal error in sredrill (a bug); please report it with the traceback above", err=True)
        raise typer.Exit(ExitCode.INTERNAL_ERROR) from None
    finally:
        processes.kill_all()
    raise typer.Exit(code)


def _maxfail(exitfirst: bool, maxfail: int | None) -> int | None:
    if exitfirst and maxfail not in (None, 1):
        raise InputError(f"-x is --maxfail 1, and --maxfail {maxfail} was given too", hint="give one of them")
    return 1 if exitfirst else maxfail


def _reporter_flag(reporter: list[str] | None, json_: bool) -> tuple[str, ...] | None:
    """The `reporter` setting the flags give: each `--reporter`, and `--json` as one more on stdout; None:
    not given (the config's or the console)."""
    chosen = [*(reporter or ()), *(["json"] if json_ else [])]
    return tuple(chosen) or None


def _reporter(
    setting: str | tuple[str, ...], output: Path | None, *, verbose: bool, started: _Started | None = None
) -> _StopNote:
    """The run's reporters (`--reporter`, repeatable; checked before the run starts), fanned out as one."""
    from sredrill.engine.reporters.fanout import choose_reporters, make_reporters

    choices = choose_reporters([setting] if isinstance(setting, str) else list(setting), output=output)
    listener = make_reporters(choices, stdout=sys.stdout, stderr=sys.stderr, verbose=verbose)
    return _StopNote(listener, started=started)


class _Started:
    """The run a `run` or `test` command started, once the engine names it (`on_run_start`): Ctrl-C prints the
    command that resumes it."""

    def __init__(self, command: Literal["run", "test"], db: str | None) -> None:
        self.command = command
        self.db = db
        self.run_id: str | None = None

    def interrupted(self) -> str:
        if self.run_id is None:
            return "interrupted before the run started: nothing was stored"
        import shlex

        db = f" --db {shlex.quote(self.db)}" if self.db else ""
        return (
            f"interrupted: finished results are stored in run {self.run_id}; "
            f"continue with: sredrill {self.command} --resume {self.run_id}{db}"
        )


class _StopNote:
    """The chosen reporters, and the engine's `--maxfail` stop line on stderr after the report (unless a
    reporter shows it itself: `on_run_stopped`)."""

    def __init__(self, inner: Any, *, started: _Started | None = None) -> None:
        self.inner = inner
        self.note: str | None = None
        self._started = started

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        if self._started is not None:
            self._started.run_id = run_id
        self.inner.on_run_start(run_id, total, title=title)

    def on_test_start(self, test_id: str, name: str) -> None:
        self.inner.on_test_start(test_id, name)

    def on_test_end(self, result: Any) -> None:
        self.inner.on_test_end(result)

    def on_run_stopped(self, message: str) -> None:
        shown = getattr(self.inner, "on_run_stopped", None)
        if shown is not None:
            shown(message)
        else:
            self.note = message

    def on_run_end(self, report: Any) -> None:
        self.inner.on_run_end(report)
        if self.note is not None:
            typer.echo(self.note, err=True)


def _resume(
    kind: Literal["run", "test"],
    ref: str,
    *,
    settings: Any,
    store: Any,
    jobs: int | None,
    output: Path | None,
    verbose: bool,
    started: _Started | None = None,
    executor: str | None = None,
) -> int:
    """`--resume RUN`: the engine reads the run's stored plan, whose choices win over the flags (so the rest
    runs and is graded like the first part); only `--jobs`, `--executor` and the reporter are this command's."""
    from sredrill.engine import run_sync
    from sredrill.engine.launch import resume_run
    from sredrill.results import exit_code_for

    listener = _reporter(settings.reporter, output, verbose=verbose, started=started)
    run_id = store.resolve_run(ref)
    report = run_sync(
        resume_run(run_id, settings=settings, listener=listener, store=store, jobs=jobs, kind=kind, executor=executor)
    )
    return exit_code_for(report.summary)


def _last_failed(store: Any, *, kind: str, agent: str | None) -> Any:
    from sredrill.engine.selection import last_failures

    failures = last_failures(store, kind=kind, agent=agent)  # type: ignore[arg-type]
    typer.echo(failures.note(), err=True)
    return failures


def _prices(path: str | None) -> Any:
    """The prices of `--prices`, else of the config's `prices` (SREDRILL_PRICES); None: not priced."""
    from sredrill.engine import load_settings
    from sredrill.engine.prices import load_prices

    chosen = path or load_settings({}).prices
    return load_prices(chosen) if chosen else None


def _warn_unpriced(report: Any, prices_path: str | None) -> None:
    """A `warning:` on stderr for each model of a priced run that the prices file has no price for."""
    from sredrill.engine.prices import unpriced_warnings

    for warning in unpriced_warnings(report.summary.usage, prices_path or ""):
        typer.echo(f"warning: {warning}", err=True)


def _db_of(db: str | None) -> str:
    """The store of every command: `--db`, else `SREDRILL_DB`, else the config file's `db`, else the default."""
    from sredrill.engine.config import DEFAULT_DB, db_path

    return db_path(db) or DEFAULT_DB


def _store(db: str | None) -> Store:
    from sredrill.store import Store

    return Store(_db_of(db))


PackOpt = Annotated[
    list[str] | None, typer.Option("--pack", "-p", help="Built-in pack name or pack folder; repeatable.")
]
SeedsOpt = Annotated[
    str | None,
    typer.Option("--seeds", help="Seeds of the incidents pack's episodes: A-B, A, or A-B,C (default: its own)."),
]

EpisodeKeyOpt = Annotated[
    Path | None,
    typer.Option(
        "--episode-key-file",
        help="A file holding the secret that keys the task families' episodes (the same key plays the same "
        "episodes); default: a fresh key per run.",
    ),
]

IsolationOpt = Annotated[
    str,
    typer.Option(
        "--isolation",
        help="How the agent is kept from the answer keys: auto (sandbox where bubblewrap works, else process), "
        "sandbox, process or none.",
    ),
]
RequireIsolationOpt = Annotated[
    str | None,
    typer.Option(
        "--require-isolation", help="Fail before anything runs when this level (sandbox, process, none) cannot be had."
    ),
]
AgentNetworkOpt = Annotated[
    str,
    typer.Option(
        "--agent-network",
        help="A sandboxed agent's network: none (its tools only) or host (e.g. to call a remote LLM).",
    ),
]
AgentEnvOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-env",
        help="Pass this environment variable to the agent (e.g. an LLM key); repeatable. Others are filtered out.",
    ),
]
AgentDirOpt = Annotated[
    Path | None,
    typer.Option("--agent-dir", help="The agent's code directory, readable in the sandbox (default: this one)."),
]


def _isolation(
    isolation: str, require: str | None, network: str, agent_env: list[str] | None, agent_dir: Path | None
) -> Any:
    """The isolation flags as a plan takes them; the level `--require-isolation` asks is checked now."""
    from sredrill.engine.api import isolation_request
    from sredrill.isolation import resolve_isolation

    request = isolation_request(
        isolation, require=require, network=network, agent_env=agent_env or (), agent_dir=agent_dir
    )
    # Resolved once now (masks come later, in the engine): a level that cannot be had fails before anything runs.
    resolve_isolation(
        request.isolation, require=request.require_isolation, network=request.agent_network,
        agent_env=request.agent_env, agent_dir=request.agent_dir,
    )  # fmt: skip
    return request


def _read_episode_key(path: Path | None) -> str | None:
    """The key in `--episode-key-file`, checked (read from a file so it is never on a command line)."""
    if path is None:
        return None
    from sredrill.incidents.families import read_key_file

    try:
        return read_key_file(path)
    except InputError as exc:
        raise InputError(f"--episode-key-file: {exc.message}", path=exc.path, hint=exc.hint) from exc


@app.command("run")
def run_cmd(
    pack: PackOpt = None,
    generate: Annotated[
        str | None,
        typer.Option(
            "--generate",
            help="A generated set to run, in memory: rds:seed=S:count=N[:difficulty=D,D].",
            show_default=False,
        ),
    ] = None,
    scenario: Annotated[list[str] | None, typer.Option("--scenario", "-s", help="NNN-slug or pack/NNN-slug.")] = None,
    difficulty: Annotated[str | None, typer.Option("--difficulty", help="Levels to run, e.g. 1,2.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent spec (default: reference).")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Evidence backend: full, selective, temporal.")] = None,
    axis2: Annotated[bool, typer.Option("--axis2", help="Axis 1 (full) and Axis 2 (selective), and the gap.")] = False,
    repeat: Annotated[int, typer.Option("--repeat", help="Runs per scenario (pass@k, pass^k).")] = 1,
    retries: Annotated[int, typer.Option("--retries", help="Retry a failing scenario up to N times.")] = 0,
    jobs: JobsOpt = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per scenario.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for seeded agents (random).")] = None,
    seeds: SeedsOpt = None,
    episode_key_file: EpisodeKeyOpt = None,
    no_blind: Annotated[bool, typer.Option("--no-blind", help="Show agents the raw alert (debugging).")] = False,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue an interrupted run.")] = None,
    reporter: ReporterOpt = None,
    output: OutputOpt = None,
    json_: JsonOpt = False,
    db: DbOpt = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible agent endpoint.")] = None,
    exitfirst: ExitFirstOpt = False,
    maxfail: MaxFailOpt = None,
    last_failed: LastFailedOpt = False,
    verbose: VerboseOpt = False,
    isolation: IsolationOpt = "auto",
    require_isolation: RequireIsolationOpt = None,
    agent_network: AgentNetworkOpt = "none",
    agent_env: AgentEnvOpt = None,
    agent_dir: AgentDirOpt = None,
    prices: PricesOpt = None,
    shard: ShardOpt = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Processes the episodes play in (N cores for grading; 1: this one; 0: one per CPU). "
            "Default: 1 here, one per CPU on Ray.",
        ),
    ] = None,
    executor: ExecutorOpt = None,
) -> None:
    """Run scenario packs against an agent and print the scoreboard (the main job)."""

    started = _Started("run", db)

    def body() -> int:
        from sredrill.engine import RunOptions, load_settings, run_packs, run_sync
        from sredrill.results import exit_code_for

        flags = {"agent": agent, "jobs": jobs, "timeout": timeout, "db": db, "base_url": base_url,
                 "reporter": _reporter_flag(reporter, json_), "prices": prices}  # fmt: skip
        isolated = _isolation(isolation, require_isolation, agent_network, agent_env, agent_dir)
        settings = load_settings(flags)
        store = _store(db)
        if resume:
            if last_failed:
                raise InputError("--last-failed starts a new run; --resume continues one", hint="give one of them")
            if shard:
                raise InputError("--shard starts a new run; --resume continues one (in its own shard)",
                                 hint="give one of them")  # fmt: skip
            return _resume("run", resume, settings=settings, store=store, jobs=jobs, output=output, verbose=verbose,
                           started=started, executor=executor)  # fmt: skip
        options = RunOptions(
            jobs=settings.jobs, retries=retries, repeat=repeat, timeout_s=settings.timeout,
            maxfail=_maxfail(exitfirst, maxfail),
        )  # fmt: skip
        options.check()
        failures = None
        if last_failed:
            failures = _last_failed(store, kind="run", agent=settings.agent or "reference")
        listener = _reporter(settings.reporter, output, verbose=verbose, started=started)
        report = run_sync(
            run_packs(
                list(pack or []), settings=settings, options=options, listener=listener, store=store, mode=mode,
                axis2=axis2, scenario_ids=list(scenario or []), difficulty=difficulty, blind=not no_blind, seed=seed,
                last_failed=failures, seeds=seeds, episode_key=_read_episode_key(episode_key_file),
                isolation=isolated, generate=generate, shard=shard, workers=workers, executor=executor,
            )
        )  # fmt: skip
        _warn_unpriced(report, settings.prices)
        return exit_code_for(report.summary)

    _guard(body, interruptible=True, started=started)


@app.command("generate")
def generate_cmd(
    out: Annotated[Path, typer.Option("--out", help="The pack folder to write (created; must be empty).")],
    domain: Annotated[str, typer.Option("--domain", help="The scenario domain: rds.")] = "rds",
    seed: Annotated[int, typer.Option("--seed", help="0-999 develop; 1000000+ evaluate (docs/generator.md).")] = 0,
    count: Annotated[int, typer.Option("--count", help="Scenarios to write.")] = 10,
    difficulty: Annotated[str | None, typer.Option("--difficulty", help="Levels to draw from, e.g. 2,3.")] = None,
    faults: Annotated[str | None, typer.Option("--faults", help="Failure modes to draw from, comma-separated.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the pack already in --out.")] = False,
) -> None:
    """Write a generated pack: scenarios made from a fault model, the same seed giving the same bytes."""

    def body() -> int:
        from sredrill.generate import parse_generate_spec, write_pack

        text = f"{domain}:seed={seed}:count={count}"
        text += f":difficulty={difficulty}" if difficulty else ""
        text += f":faults={faults}" if faults else ""
        spec = parse_generate_spec(text)
        root = write_pack(out, spec, force=force)
        typer.echo(f"wrote {spec.count} scenario(s) of {spec.text()} to {root}; run them: sredrill run --pack {root}")
        return 0

    _guard(body, interruptible=True)


@app.command("export")
def export_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id, unique prefix, or 'latest' (or give --pack).")] = None,
    format_: Annotated[str, typer.Option("--format", "-f", help="jsonl or parquet (the export extra).")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="The file to write (default: RUN_ID.FORMAT here).")
    ] = None,
    passed_only: Annotated[
        bool, typer.Option("--passed-only", help="Only the episodes that passed (demonstrations for SFT).")
    ] = False,
    pack: Annotated[
        list[str] | None,
        typer.Option("--pack", "-p", help="Run these packs first (repeatable), then export that run."),
    ] = None,
    generate: Annotated[
        str | None,
        typer.Option("--generate", help="Or run a generated set first: rds:seed=S:count=N.", show_default=False),
    ] = None,
    scenario: Annotated[
        list[str] | None, typer.Option("--scenario", "-s", help="That run's scenarios: NNN-slug or pack/NNN-slug.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="The agent of that run (default: reference).")] = None,
    axis2: Annotated[bool, typer.Option("--axis2", help="That run plays Axis 2 as well.")] = False,
    jobs: JobsOpt = None,
    db: DbOpt = None,
) -> None:
    """Write a stored run's episodes as training data: one record per episode with its chat messages, tool calls
    and results, reward and grade (JSON lines, or Parquet); with --pack or --generate, run them first (the
    reference agent's trajectories are demonstrations)."""

    started = _Started("run", db)  # Ctrl-C while the run plays: how to resume it (then export it)

    def body() -> int:
        from sredrill.store.export import EXPORT_FORMATS, episode_records, write_export

        if format_ not in EXPORT_FORMATS:
            raise InputError(f"--format {format_!r} is not an export format", allowed=list(EXPORT_FORMATS),
                             hint="--format jsonl (or parquet, with the export extra)")  # fmt: skip
        runs_first = bool(pack) or generate is not None
        if runs_first == (run is not None):
            raise InputError("give a stored run, or --pack/--generate to run one first (not both)",
                             hint="sredrill export latest, or sredrill export --pack rds_postgres")  # fmt: skip
        store = _store(db)
        if run is not None:
            if agent is not None or axis2 or scenario:
                raise InputError("--agent, --scenario and --axis2 choose the run that --pack/--generate starts",
                                 hint="leave them out when exporting a stored run")  # fmt: skip
            run_id = store.resolve_run(run)
        else:
            from sredrill.engine import RunOptions, load_settings, run_packs, run_sync

            settings = load_settings({"agent": agent, "jobs": jobs, "db": db})
            listener = _reporter("console", None, verbose=False, started=started)
            report = run_sync(
                run_packs(list(pack or []), settings=settings, options=RunOptions(jobs=settings.jobs),
                          listener=listener, store=store, axis2=axis2, scenario_ids=list(scenario or []),
                          generate=generate)
            )  # fmt: skip
            run_id = report.run_id
        target = output if output is not None else Path(f"{run_id}.{format_}")
        written = write_export(episode_records(store, run_id, passed_only=passed_only), target, format_)
        typer.echo(f"exported {written} episode{'' if written == 1 else 's'} of run {run_id} to {target}", err=True)
        return ExitCode.OK

    _guard(body, interruptible=True, started=started)


@app.command("baselines")
def baselines_cmd(
    pack: PackOpt = None,
    db: DbOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random baseline.")] = 0,
    seeds: SeedsOpt = None,
    episode_key_file: EpisodeKeyOpt = None,
    jobs: JobsOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Every naive baseline and the reference agent on the same packs: the discrimination table, one per pack
    (pass rate and failure-mode accuracy per difficulty; the reference agent's row of a built-in pack is a
    development figure)."""

    def body() -> int:
        import json

        from rich.console import Console

        from sredrill.engine import RunOptions, load_settings, run_baselines, run_sync

        settings = load_settings({"jobs": jobs, "db": db})
        reports = run_sync(
            run_baselines(
                list(pack or []), settings=settings, options=RunOptions(jobs=settings.jobs),
                store=_store(db), seed=seed, seeds=seeds,
                episode_key=_read_episode_key(episode_key_file),
            )
        )  # fmt: skip
        from sredrill.engine.reporters.tables import baselines_rows, baselines_table
        from sredrill.scenarios import builtin_pack_names

        # A pack given by a built-in name is the built-in one (the loader's rule); a folder never is, whatever
        # its name. The reference agent's figure on a built-in pack is a development figure.
        names = builtin_pack_names()
        builtin = [p for p in pack or names if p in names]
        if json_:
            typer.echo(json.dumps(baselines_rows(reports, builtin), indent=2))
            return ExitCode.OK
        console = Console(width=200, highlight=False)
        for part in baselines_table(reports, builtin):
            console.print(part)
        return ExitCode.OK

    _guard(body)


@app.command("audit")
def audit_cmd(
    pack: PackOpt = None,
    generate: Annotated[
        list[str] | None,
        typer.Option(
            "--generate",
            help="A generated set to audit, in memory (repeatable): rds:seed=S:count=N[:difficulty=D,D].",
            show_default=False,
        ),
    ] = None,
    axis2: Annotated[bool, typer.Option("--axis2", help="Both axes: a table per axis.")] = False,
    jobs: JobsOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the guesser and the random baseline.")] = 0,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", help="Keep the audit's runs in this store (default: $SREDRILL_DB, the config's db, else none)."
        ),
    ] = None,
    no_fail: Annotated[bool, typer.Option("--no-fail", help="Exit 0 even when a red-team agent is flagged.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Red-team agents and baselines beside the reference agent, per pack (and generated set): pass@1 overall
    and per difficulty. A red-team agent above 10% on difficulty ≥ 2 is marked red and the command exits 1
    (unless --no-fail). Without --pack or --generate, the built-in packs."""

    def body() -> int:
        import json

        from rich.console import Console

        from sredrill.engine import RunOptions, load_settings, run_sync
        from sredrill.engine.audit import audit_json, audit_packs, audit_tables, is_flagged
        from sredrill.engine.config import db_path
        from sredrill.scenarios import builtin_pack_names

        settings = load_settings({"jobs": jobs})
        kept = _store(db) if db_path(db) else None
        audits = run_sync(
            audit_packs(
                list(pack or ([] if generate else builtin_pack_names())), settings=settings,
                options=RunOptions(jobs=settings.jobs), store=kept, axis2=axis2, seed=seed,
                generate=list(generate or ()),
            )
        )  # fmt: skip
        if json_:
            typer.echo(json.dumps(audit_json(audits), indent=2, ensure_ascii=False))
        else:
            console = Console(width=200, highlight=False)
            for part in audit_tables(audits):
                console.print(part)
        flagged = any(is_flagged(r) for a in audits for r in a.rows)
        return ExitCode.TESTS_FAILED if flagged and not no_fail else ExitCode.OK

    _guard(body, interruptible=True)


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: a free one).")] = 7860,
    pack: PackOpt = None,
    evals: Annotated[
        str | None, typer.Option("--evals", help="Folder of eval files the runs API and UI may run.")
    ] = None,
    token: Annotated[str | None, typer.Option("--token", help="Require 'Authorization: Bearer T'.")] = None,
    max_sessions: Annotated[int, typer.Option("--max-sessions", help="Sessions open at once.")] = 64,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds before an idle session closes.")] = 300,
    max_runs: Annotated[int, typer.Option("--max-runs", help="Runs of the runs API going on at once.")] = 4,
    allow_agent: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-agent",
            help="Agent specs (glob, repeatable: 'cmd:*', 'py:myagents.*') the runs API and UI may start "
            "beyond the built-in agents.",
        ),
    ] = None,
    db: DbOpt = None,
    episode_key_file: EpisodeKeyOpt = None,
    judge_base_url: Annotated[
        str | None, typer.Option("--judge-base-url", help="The judge endpoint of eval runs started here.")
    ] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="The judge model of those runs.")] = None,
    judge_api_key_env: Annotated[
        str | None,
        typer.Option(
            "--judge-api-key-env",
            help="The variable holding the judge's API key (default: SREDRILL_JUDGE_API_KEY, else OPENAI_API_KEY).",
            metavar="NAME",
        ),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", "--skip-judge", help="Skip every judge of those runs (neutral verdicts).")
    ] = False,
    prices: PricesOpt = None,
) -> None:
    """Serve the environment over OpenEnv's protocol (HTTP, WebSocket, MCP) and agents' tool routes.

    The judge settings are the defaults of the eval runs the runs API and UI start; a request may name its own
    model and endpoint (the API key is never sent to another endpoint than this one). With --prices, the runs
    started here are priced as they run, and every run the API and UI show is priced by that file."""

    def body() -> int:
        from sredrill.engine import load_settings
        from sredrill.harness.context import JudgeConfig
        from sredrill.server import create_app, is_loopback, serve
        from sredrill.server.runs_api import judge_url_problem

        settings = load_settings({"db": db, "judge_base_url": judge_base_url, "judge_model": judge_model,
                                  "skip_judge": True if no_judge else None})  # fmt: skip
        if settings.judge_base_url is not None and (problem := judge_url_problem(settings.judge_base_url)):
            origin = "--judge-base-url" if judge_base_url else "$SREDRILL_JUDGE_BASE_URL"
            if not judge_base_url and not os.environ.get("SREDRILL_JUDGE_BASE_URL"):
                origin = "judge_base_url in the config file"
            raise InputError(f"{origin} {problem}")
        key = settings.judge_api_key or settings.api_key
        if judge_api_key_env is not None:
            key = os.environ.get(judge_api_key_env)
            if not key:
                raise InputError(f"--judge-api-key-env {judge_api_key_env}: ${judge_api_key_env} is not set",
                                 hint=f"export {judge_api_key_env}=… before sredrill serve")  # fmt: skip
        judge = JudgeConfig(base_url=settings.judge_base_url, model=settings.judge_model, api_key=key,
                            skip=settings.skip_judge)  # fmt: skip
        served = create_app(
            packs=list(pack) if pack else None, max_sessions=max_sessions, idle_timeout_s=idle_timeout,
            token=token, loopback_only=is_loopback(host), evals=evals, db=_db_of(db), max_runs=max_runs,
            allow_agents=allow_agent or (), episode_key=_read_episode_key(episode_key_file), judge=judge,
            prices=_prices(prices),
        )  # fmt: skip
        runs_token = served.state.options.runs_token

        def ready(url: str) -> None:
            if runs_token is None:
                typer.echo(f"sredrill serve: listening on {url} (docs: {url}/docs; Ctrl-C stops)", err=True)
                typer.echo("warning: reachable from other machines without a token (add --token); the runs API "
                           "and the web UI stay closed without one", err=True)  # fmt: skip
                return
            from urllib.parse import quote

            # Like Jupyter: the link sets the token for the browser (a cookie), then opens the UI at /ui.
            link = f"{url}/?token={quote(runs_token, safe='')}"
            typer.echo(f"sredrill serve: listening on {link} (web UI at {url}/ui; runs API: 'Authorization: "
                       f"Bearer <the token>'; docs: {url}/docs; Ctrl-C stops)", err=True)  # fmt: skip

        try:
            serve(served, host=host, port=port, on_ready=ready)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise InputError(f"cannot listen on {host}:{port}: {reason}", hint="try another --port") from exc
        return ExitCode.OK

    _guard(body)


@app.command("test")
def test_cmd(
    paths: Annotated[list[str] | None, typer.Argument(help="Eval files or folders (*_eval.py, eval_*.py).")] = None,
    agent: AgentOpt = None,
    jobs: JobsOpt = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Skip every judge (neutral verdicts).")] = False,
    insights: Annotated[str, typer.Option("--insights", help="rules (default) or llm.")] = "rules",
    repeat: Annotated[int, typer.Option("--repeat", help="Run each test N times (pass@k, pass^k).")] = 1,
    retries: Annotated[int, typer.Option("--retries", help="Retry a failing test up to N times.")] = 0,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per test (overrides).")] = None,
    grep: Annotated[str | None, typer.Option("--grep", "-g", help="Only tests whose id matches RE.")] = None,
    label: Annotated[list[str] | None, typer.Option("--label", "-l", help="Only tests with this label.")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue an interrupted run.")] = None,
    reporter: ReporterOpt = None,
    output: OutputOpt = None,
    json_: JsonOpt = False,
    db: DbOpt = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible agent endpoint.")] = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model")] = None,
    exitfirst: ExitFirstOpt = False,
    maxfail: MaxFailOpt = None,
    last_failed: LastFailedOpt = False,
    verbose: VerboseOpt = False,
    isolation: IsolationOpt = "auto",
    require_isolation: RequireIsolationOpt = None,
    agent_network: AgentNetworkOpt = "none",
    agent_env: AgentEnvOpt = None,
    agent_dir: AgentDirOpt = None,
    prices: PricesOpt = None,
    shard: ShardOpt = None,
    executor: ExecutorOpt = None,
) -> None:
    """Run SDK eval files against an agent."""

    started = _Started("test", db)

    def body() -> int:
        from sredrill.engine import RunOptions, load_settings, run_eval_files, run_sync
        from sredrill.results import exit_code_for

        if insights not in ("rules", "llm"):
            raise InputError(f"--insights must be 'rules' or 'llm', got {insights!r}")
        chosen_insights: Literal["rules", "llm"] = "llm" if insights == "llm" else "rules"
        if repeat > 1 and retries:
            raise InputError("use --repeat or --retries, not both: repeats measure pass@k, retries forgive flakes")
        isolated = _isolation(isolation, require_isolation, agent_network, agent_env, agent_dir)
        settings = load_settings(
            {
                "agent": agent,
                "jobs": jobs,
                "timeout": timeout,
                "db": db,
                "base_url": base_url,
                "judge_base_url": judge_base_url,
                "judge_model": judge_model,
                "skip_judge": True if no_judge else None,
                "reporter": _reporter_flag(reporter, json_),
                "prices": prices,
            }
        )
        store = _store(db)
        if resume:
            if last_failed:
                raise InputError("--last-failed starts a new run; --resume continues one", hint="give one of them")
            if shard:
                raise InputError("--shard starts a new run; --resume continues one (in its own shard)",
                                 hint="give one of them")  # fmt: skip
            return _resume("test", resume, settings=settings, store=store, jobs=jobs, output=output, verbose=verbose,
                           started=started, executor=executor)  # fmt: skip
        options = RunOptions(
            jobs=settings.jobs, retries=retries, repeat=repeat, timeout_s=settings.timeout, insights=chosen_insights,
            maxfail=_maxfail(exitfirst, maxfail),
        )  # fmt: skip
        options.check()
        if not paths:
            raise InputError("no eval files given", hint="usage: sredrill test PATH… (files or folders)")
        if settings.agent is None:
            # Before anything runs: every test that calls agent.run() would error with the same message.
            raise InputError(
                "no agent: pass --agent SPEC (or set agent in [tool.sredrill])",
                hint="e.g. --agent py:examples.agents.echo_agent:agent, --agent 'cmd:python my_agent.py'; "
                'or SREDRILL_AGENT, or agent = "…" in sredrill.toml',
            )
        failures = _last_failed(store, kind="test", agent=settings.agent) if last_failed else None
        listener = _reporter(settings.reporter, output, verbose=verbose, started=started)
        report = run_sync(
            run_eval_files(
                list(paths),
                settings=settings,
                options=options,
                listener=listener,
                store=store,
                grep=grep,
                labels=list(label or []),
                last_failed=failures,
                isolation=isolated,
                shard=shard,
                executor=executor,
            )
        )
        _warn_unpriced(report, settings.prices)
        return exit_code_for(report.summary)

    _guard(body, interruptible=True, started=started)


@app.command("list")
def list_cmd(
    paths: Annotated[list[str], typer.Argument(help="Eval files or folders.")],
    grep: Annotated[str | None, typer.Option("--grep", "-g")] = None,
    label: Annotated[list[str] | None, typer.Option("--label", "-l")] = None,
    json_: JsonOpt = False,
) -> None:
    """Discover tests without running them."""

    def body() -> int:
        import json

        from sredrill.engine import list_tests

        plan = list_tests(paths, grep=grep, labels=list(label or []))
        for err in plan.loaded.errors:
            typer.echo(f"error: {err.render()}", err=True)
        for warning in plan.loaded.warnings:
            typer.echo(f"warning: {warning}", err=True)
        if json_:
            rows = [
                {"id": t.id, "name": t.name, "file": t.file, "line": t.line, "labels": list(t.labels),
                 "prompt": t.prompt, "timeout_s": t.timeout_s, "content_hash": t.content_hash}
                for t in plan.tests
            ]  # fmt: skip
            typer.echo(json.dumps(rows, indent=2))
        else:
            for t in plan.tests:
                labels = f"  [{', '.join(t.labels)}]" if t.labels else ""
                typer.echo(f"{t.id}{labels}")
            typer.echo(f"{len(plan.tests)} test(s) in {len(plan.loaded.files)} file(s)", err=True)
        return ExitCode.USAGE_ERROR if plan.loaded.errors else ExitCode.OK

    _guard(body)


@runs_app.command("list")
def runs_list(
    db: DbOpt = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
    json_: Annotated[
        bool, typer.Option("--json", help="One JSON row per run, as GET /api/runs lists it (docs/server.md).")
    ] = False,
) -> None:
    """Stored runs, newest first."""

    def body() -> int:
        records = _store(db).list_runs(limit)
        if json_:
            import json

            from sredrill.server.runs_api import run_row

            rows = [run_row(r, r.status.value) for r in records]
            typer.echo(json.dumps(rows, indent=2))
            return ExitCode.OK
        from rich.console import Console

        from sredrill.engine.reporters.tables import runs_table

        console = Console(width=200)
        for part in runs_table(records):
            console.print(part, soft_wrap=False)
        return ExitCode.OK

    _guard(body)


@runs_app.command("delete")
def runs_delete(
    runs: Annotated[list[str], typer.Argument(help="Run ids, unique prefixes, or 'latest'.")],
    db: DbOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Delete a run that has not ended too.")] = False,
) -> None:
    """Delete stored runs and everything stored for them (results, trajectories, spans); no confirmation."""

    def body() -> int:
        store = _store(db)
        # Every reference resolved (and each run checked) first: a typo deletes nothing.
        run_ids = list(dict.fromkeys(store.resolve_run(r) for r in runs))
        if not force:
            for run_id in run_ids:
                record = store.get_run(run_id)
                if record is not None and not record.finished:
                    store.delete_run(run_id)  # raises the "has not ended" error
        for run_id in run_ids:
            gone = store.delete_run(run_id, force=force)
            typer.echo(f"deleted run {gone.run_id}: {gone.results} result(s), {gone.trajectories} "
                       f"trajectory(ies), {gone.spans} span(s)")  # fmt: skip
        return ExitCode.OK

    _guard(body)


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="Run id, unique prefix, or 'latest'.")],
    db: DbOpt = None,
    json_: JsonOpt = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write the run page to this HTML file.")] = None,
    prices: PricesOpt = None,
) -> None:
    """A stored run's scoreboard and failures (or its RunReport with --json)."""

    def body() -> int:
        from sredrill.engine.reporters import make_reporter

        priced_by = _prices(prices)
        store = _store(db)
        run_id = store.resolve_run(run)
        report = store.report(run_id)
        if report is None:  # removed since it was resolved (another process)
            raise InputError(f"run {run_id!r} is no longer in the store", hint="list runs with: sredrill runs list")
        if priced_by is not None:
            from sredrill.engine.prices import price_report

            report = price_report(report, priced_by)
            _warn_unpriced(report, priced_by.path)
        if html is not None:
            make_reporter("html", output=html, stdout=sys.stdout, stderr=sys.stderr).on_run_end(report)
        if json_:
            typer.echo(report.model_dump_json(indent=2))
        else:
            make_reporter("console", output=None, stdout=sys.stdout, stderr=sys.stderr).on_run_end(report)
        return ExitCode.OK

    _guard(body)


@runs_app.command("compare")
def runs_compare(
    a: Annotated[str, typer.Argument(help="Baseline run.")],
    b: Annotated[str, typer.Argument(help="New run.")],
    db: DbOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON (a RunComparison).")] = False,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when a test that passed in A does not pass in B.")
    ] = False,
    prices: PricesOpt = None,
) -> None:
    """How run B differs from run A: each test's direction (regressed, fixed, new, gone), every pass rate with
    its 95% interval, and McNemar's paired test over the tests both have."""

    def body() -> int:
        priced_by = _prices(prices)
        store = _store(db)
        cmp = store.compare(store.resolve_run(a), store.resolve_run(b))
        if priced_by is not None and cmp.usage is not None:
            from sredrill.engine.prices import price_comparison, unpriced_warnings

            cmp = price_comparison(cmp, priced_by)
            for usage in (cmp.usage.usage_a, cmp.usage.usage_b) if cmp.usage is not None else ():
                for warning in unpriced_warnings(usage, priced_by.path):
                    typer.echo(f"warning: {warning}", err=True)
        if json_:
            typer.echo(cmp.model_dump_json(indent=2))
        else:
            from sredrill.engine.reporters.tables import compare_lines

            for line in compare_lines(cmp):
                typer.echo(line)
        return ExitCode.TESTS_FAILED if fail_on_regression and cmp.regressed else ExitCode.OK

    _guard(body)


@runs_app.command("merge")
def runs_merge(
    sources: Annotated[list[Path], typer.Argument(help="The stores the shards wrote (each --shard K/N run's --db).")],
    into: Annotated[Path, typer.Option("--into", help="The store to write the merged runs to (created if new).")],
) -> None:
    """Join the runs of one plan played as --shard 1/N … N/N into one run, as if it had run unsharded."""

    def body() -> int:
        from sredrill.engine.merge import merge_runs

        for merged in merge_runs(sources, into):
            results = f"{merged.results} result{'' if merged.results == 1 else 's'}"
            typer.echo(f"merged {len(merged.shards)} shards ({merged.title}) into run {merged.run_id} in {into}: "
                       f"{results}; see: sredrill runs show {merged.run_id} --db {into}")  # fmt: skip
        return ExitCode.OK

    _guard(body)


@runs_app.command("regrade")
def runs_regrade(
    run: Annotated[str, typer.Argument(help="Run id, unique prefix, or 'latest'.")],
    db: DbOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Grade a stored run's trajectories again under the current rules, as a new run linked to the old.

    Nothing runs again: each RCA result's served tool calls are replayed through a fresh toolset and its stored
    diagnosis is graded. Exits 1 when a regraded test fails.
    """

    def body() -> int:
        import asyncio

        from sredrill.engine.regrade import regrade_run

        store = _store(db)
        report = asyncio.run(regrade_run(store, run))
        if json_:
            typer.echo(report.model_dump_json(indent=2))
        else:
            from sredrill.engine.reporters import make_reporter

            make_reporter("console", output=None, stdout=sys.stdout, stderr=sys.stderr).on_run_end(report)
            new = store.get_run(report.run_id)
            old = new.config.get("regraded_from") if new is not None else None
            typer.echo(f"run {report.run_id} regrades run {old}; see: sredrill runs compare {old} {report.run_id}")
        if report.summary.errored:
            return ExitCode.TESTS_ERRORED
        return ExitCode.TESTS_FAILED if report.summary.failed else ExitCode.OK

    _guard(body)


def main() -> None:
    app()
