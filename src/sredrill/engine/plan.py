"""The run plan: everything a run starts from and resumes from, typed, versioned and stored with the run.

`sredrill run` and `sredrill test` (and `sredrill.run`, the runs API) turn their arguments into one `RunPlan`;
the engine starts the run from it and stores it with the run (`Store.begin_run(config=plan.stored())`), and
`--resume RUN` (or `POST /api/runs/{id}/resume`) reads it back (`stored_plan`), so the resumed part runs and
is graded exactly like the first part. A plan stored by an older sredrill (the untyped dict of plan version 0)
is upgraded when it is read; one stored by a newer sredrill is refused with the fix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SecretStr, ValidationError, model_validator

from sredrill.errors import InputError
from sredrill.evidence import BackendMode
from sredrill.incidents.families import MIN_KEY_LENGTH

from .execute import RunOptions
from .selection import LastFailures

if TYPE_CHECKING:
    from sredrill.store import RunRecord, Store

__all__ = [
    "PLAN_VERSION",
    "EvalSelection",
    "GeneratedSelection",
    "IsolationRequest",
    "LastFailedSelection",
    "PackSelection",
    "RunKind",
    "RunPlan",
    "Shard",
    "seeds_text",
    "stored_plan",
    "upgrade_config",
]

PLAN_VERSION: Final = 1
"""The version of `RunPlan` this sredrill writes. Version 0 is the untyped config dict stored before plans
were typed (no `version` key): `upgrade_config` reads it."""

RunKind = Literal["run", "test"]
"""What a run runs: scenario packs (`sredrill run`) or eval files (`sredrill test`), as the store names it."""


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class GeneratedSelection(_Plan):
    """A generated set a `sredrill run --generate SPEC` plays, held in memory: the spec and the generator's version
    (a resumed run regenerates the same scenarios only with that version, so it is checked)."""

    spec: str = Field(min_length=1)
    """The spec as `sredrill.generate.parse_generate_spec` reads it, in its one spelling (`GenerateSpec.text()`)."""
    generator: str = Field(min_length=1)
    """The generator's name (the spec's domain: `rds`)."""
    version: str = Field(min_length=1)
    """The generator's version when the run started."""


class PackSelection(_Plan):
    """What a `sredrill run` plays: scenario packs and the incidents pack, and how they are graded."""

    kind: Literal["run"] = "run"
    packs: tuple[str, ...] = ()
    """Built-in pack names or pack folders, resolved (no pack and no generated set given: every built-in pack
    and `incidents`). Empty only beside a generated set."""
    generated: GeneratedSelection | None = None
    """A generated set played besides the packs (`--generate SPEC`); None: none."""
    mode: BackendMode | None = None
    """The evidence backend of Axis 1 (`--mode`); None: `full`."""
    axis2: bool = False
    """Run Axis 1 (full) and Axis 2 (selective), and report the gap."""
    scenarios: tuple[str, ...] = ()
    """`--scenario` ids as given (RCA folders, `pack/folder`, incident tasks, `task#seedN`); empty: all."""
    difficulties: tuple[Annotated[int, Field(ge=1, le=4)], ...] = ()
    """Levels kept (`--difficulty`); empty: every level."""
    blind: bool = True
    """False serves agents the raw alert (`--no-blind`, debugging a pack only)."""
    seed: int | None = None
    """The seed of seeded agents (`random`)."""
    seeds: tuple[Annotated[int, Field(ge=0)], ...] | None = None
    """The seeds every task of the incidents pack plays (`--seeds`); None: each task's defaults."""

    @model_validator(mode="after")
    def _plays_something(self) -> PackSelection:
        if not self.packs and self.generated is None:
            raise ValueError("a pack run plays at least one pack or a generated set")
        return self


class EvalSelection(_Plan):
    """What a `sredrill test` runs: eval files, filtered."""

    kind: Literal["test"] = "test"
    paths: tuple[str, ...] = Field(min_length=1)
    """Eval files or folders, as given."""
    grep: str | None = None
    """Only tests whose id matches this regular expression (`--grep`)."""
    labels: tuple[str, ...] = ()
    """Only tests with one of these labels (`--label`)."""


class LastFailedSelection(_Plan):
    """The tests `--last-failed` chose when the run started (kept, so a resumed run runs the same ones)."""

    run: str | None
    """The run whose failures were chosen."""
    ids: tuple[str, ...] = Field(min_length=1)
    """Ids of its failed and errored tests."""
    files: tuple[str, ...] = ()
    """Eval files that failed to load there (every test they register is re-run)."""

    @classmethod
    def of(cls, failures: LastFailures | None) -> LastFailedSelection | None:
        """The selection `failures` makes, or None when it narrows nothing (no earlier failure)."""
        if failures is None or not failures.ids:
            return None
        return cls(run=failures.run_id, ids=tuple(sorted(failures.ids)), files=tuple(sorted(failures.files)))

    def failures(self) -> LastFailures:
        return LastFailures(run_id=self.run, ids=frozenset(self.ids), files=frozenset(self.files))


class Shard(_Plan):
    """One of `count` disjoint parts of a run (`--shard K/N`): the tests whose id hashes to `index`.

    The hash is of the test id alone (SHA-256, not Python's salted `hash`), so every machine, process and
    resume puts a test in the same shard, and the N shards of a plan together run each of its tests once.

    Examples:
        >>> Shard.parse("2/3")
        Shard(index=2, count=3)
        >>> sum(Shard(index=k, count=3).selects("rds_postgres/001-replication-lag#1") for k in (1, 2, 3))
        1
    """

    index: int = Field(ge=1)
    """K: which part, from 1."""
    count: int = Field(ge=1)
    """N: how many parts."""

    @model_validator(mode="after")
    def _within(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K must be between 1 and N")
        return self

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N` as typed (`--shard 2/4`).

        Raises:
            InputError: not two whole numbers, or K outside 1..N.
        """
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        hint = "--shard K/N with 1 <= K <= N, e.g. --shard 1/4 on the first of four machines"
        if match is None:
            raise InputError(f"--shard {text!r} is not K/N", hint=hint)
        index, count = int(match[1]), int(match[2])
        if not 1 <= index <= count:
            raise InputError(f"--shard {text!r}: K must be between 1 and N", hint=hint)
        return cls(index=index, count=count)

    def selects(self, test_id: str) -> bool:
        """Whether the test with this id is in this shard."""
        digest = hashlib.sha256(test_id.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def text(self) -> str:
        return f"{self.index}/{self.count}"


IsolationLevel = Literal["auto", "sandbox", "process", "none"]
"""`--isolation`: how far the agent is kept from the grader's data (`sredrill.isolation`)."""
RequiredLevel = Literal["sandbox", "process", "none"]
"""`--require-isolation`: the lowest level the run accepts."""


class IsolationRequest(_Plan):
    """How the agent is isolated, as asked (`--isolation`, `--require-isolation`, `--agent-network`,
    `--agent-env`, `--agent-dir`); the engine resolves it to the level in force when the run starts."""

    isolation: IsolationLevel = "auto"
    """`auto`: sandbox where bubblewrap works, else process (with a warning)."""
    require_isolation: RequiredLevel | None = None
    """Fail before anything runs when the level in force is below this one; None: any level."""
    agent_network: Literal["none", "host"] = "none"
    """A sandboxed agent's network: `none` (its tools over a Unix socket) or `host` (a remote LLM)."""
    agent_env: tuple[str, ...] = ()
    """Environment variables passed to the agent beyond the allow-list (`--agent-env NAME`, e.g. an LLM key)."""
    agent_dir: str | None = None
    """The agent's code directory, readable in the sandbox; None: the launch directory."""


class RunPlan(_Plan):
    """Everything a run starts from and resumes from (as Inspect AI's `EvalSpec` with its `EvalConfig`).

    The plan is what was asked, not what it expanded to: the tests are selected from it when the run starts
    and again when it resumes (a resumed run skips the results already stored). Where the agent's endpoint
    and the credentials are (`Settings.base_url`, API keys) is not part of it: they belong to the machine
    running the plan and are never stored.

    The scale work (DESIGN §11.6) expands a plan into serialisable per-episode specs (one per scenario and
    axis, incident episode or test, and attempt): every field here is plain data for that reason, and the
    episode key travels as a secret (`SecretStr`) that only `stored()` and the engine reveal.

    Examples:
        >>> plan = RunPlan(agent="reference", selection=PackSelection(packs=("rds_postgres",)))
        >>> RunPlan.model_validate(plan.stored()) == plan
        True
    """

    version: Literal[1] = PLAN_VERSION
    """The plan's format (`PLAN_VERSION`)."""
    selection: PackSelection | EvalSelection = Field(discriminator="kind")
    """What runs: packs (`sredrill run`) or eval files (`sredrill test`)."""
    agent: str | None
    """The agent spec; None only for eval files run without an agent (each test calling `agent.run()` errors)."""
    jobs: int = Field(1, ge=1)
    """Tests run side by side (a resume may choose another number: it changes no result)."""
    workers: int = Field(1, ge=0)
    """Processes a pack run's episodes play in (`--workers`): 1 plays them in the run's own process (on the local
    executor); N > 1 in N pack workers, one attempt at a time each; 0: one per CPU of the executor (this
    machine's, or the Ray cluster's). It changes no result."""
    executor: str = Field("local", pattern=r"^(local|ray|ray:.+:[0-9]+)$")
    """Where the workers run (`--executor`): `local` (processes on this machine) or `ray` / `ray:HOST:PORT` (Ray
    actors, `ray_executor`). It changes no result."""
    repeat: int = Field(1, ge=1)
    """Attempts per test, all graded (pass@k, pass^k)."""
    retries: int = Field(0, ge=0)
    """Extra attempts of a failing test."""
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    """Seconds per attempt, over each test's own; None keeps each test's own."""
    maxfail: int | None = Field(None, ge=1)
    """No new test starts after this many failed or errored ones; None: never stop."""
    insights: Literal["rules", "llm"] = "rules"
    skip_judge: bool = False
    """Every judge gives a neutral, skipped verdict (`--no-judge`)."""
    last_failed: LastFailedSelection | None = None
    """The `--last-failed` selection the run started with; None: every selected test."""
    shard: Shard | None = None
    """The part of the selected tests this run plays (`--shard K/N`); None: all of them. `sredrill runs merge`
    joins the N shards' runs into one."""
    regraded_from: str | None = None
    """The run this one regraded (`sredrill runs regrade`): its results are that run's trajectories graded again."""
    episode_key: SecretStr | None = Field(None, min_length=MIN_KEY_LENGTH)
    """The secret that keys the task families' episodes (a pack run's, fresh unless given). Never reported,
    shown or given to an agent: its repr and `model_dump` mask it, `stored()` reveals it for the store only."""
    isolation: IsolationLevel = "auto"
    """How far the agent is kept from the grader's data (`--isolation`; see `IsolationRequest`)."""
    require_isolation: RequiredLevel | None = None
    """The lowest level the run accepts (`--require-isolation`); None: any."""
    agent_network: Literal["none", "host"] = "none"
    """A sandboxed agent's network (`--agent-network`)."""
    agent_env: tuple[str, ...] = ()
    """Variables passed to the agent beyond the allow-list (`--agent-env NAME`): names only, never values."""
    agent_dir: str | None = None
    """The agent's code directory (`--agent-dir`); None: the launch directory."""

    @property
    def kind(self) -> RunKind:
        return self.selection.kind

    def options(self, *, jobs: int | None = None) -> RunOptions:
        """How `execute` runs the plan's tests; `jobs` overrides the plan's (a resume on another machine)."""
        return RunOptions(
            jobs=self.jobs if jobs is None else jobs,
            retries=self.retries,
            repeat=self.repeat,
            timeout_s=self.timeout_s,
            insights=self.insights,
            maxfail=self.maxfail,
        )

    def isolation_request(self) -> IsolationRequest:
        """The plan's isolation fields, as asked."""
        return IsolationRequest(
            isolation=self.isolation,
            require_isolation=self.require_isolation,
            agent_network=self.agent_network,
            agent_env=self.agent_env,
            agent_dir=self.agent_dir,
        )

    def key(self) -> str | None:
        """The episode key in clear, for the engine that keys the episodes."""
        return self.episode_key.get_secret_value() if self.episode_key is not None else None

    def stored(self) -> dict[str, JsonValue]:
        """The plan as the store keeps it: JSON values, the episode key in clear (the store is the run's own)."""
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        data["episode_key"] = self.key()
        return data

    @classmethod
    def with_options(cls, options: RunOptions, **fields: Any) -> RunPlan:
        """A plan whose execution fields are `options`' (checked first, so a bad one names its flag)."""
        options.check()
        return cls(
            jobs=options.jobs,
            repeat=options.repeat,
            retries=options.retries,
            timeout_s=options.timeout_s,
            maxfail=options.maxfail,
            insights=options.insights,
            **fields,
        )


def stored_plan(store: Store, run_id: str) -> tuple[RunPlan, RunRecord]:
    """The plan a stored run started from (upgraded when an older sredrill stored it), and its record.

    Raises:
        InputError: no run has this id, or its plan cannot be read (a newer sredrill's, or damaged).
    """
    record = store.get_run(run_id)
    if record is None:
        raise InputError(f"no run {run_id!r} in the store", hint="list runs with: sredrill runs list")
    config = record.config
    version = config.get("version")
    try:
        if version is None:
            return upgrade_config(config, kind=record.kind, agent=record.agent), record
        if version == PLAN_VERSION:
            return RunPlan.model_validate(config), record
    except (ValueError, TypeError) as exc:  # ValidationError included: a damaged row, never the user's typo
        problems = _problems(exc)
        raise InputError(
            f"run {run_id!r}: its stored plan cannot be read ({problems})",
            path=str(store.path),
            hint="start a new run instead of resuming this one",
        ) from exc
    raise InputError(
        f"run {run_id!r} was stored by another sredrill (plan version {version!r}; this one reads "
        f"versions 0-{PLAN_VERSION})",
        path=str(store.path),
        hint="resume it with the sredrill that started it, or start a new run",
    )


def upgrade_config(config: Mapping[str, Any], *, kind: str, agent: str | None) -> RunPlan:
    """The plan of a run stored before plans were typed: its config dict (plan version 0), read as the CLI
    read it then (a missing key takes the default that CLI gave it), plus the run's kind and agent columns.

    Raises:
        InputError: the run is neither a `run` nor a `test` run (nothing else was ever resumable).
        ValidationError: a value the old CLI would not have stored (a damaged row).
    """
    get = config.get
    common: dict[str, Any] = {
        "agent": agent,
        "jobs": get("jobs") or 1,
        "repeat": get("repeat") or 1,
        "retries": get("retries") or 0,
        "timeout_s": get("timeout"),
        "maxfail": get("maxfail"),
        "last_failed": LastFailedSelection.of(LastFailures.from_config(get("last_failed"))),
    }
    if kind == "run":
        return RunPlan(
            selection=PackSelection(
                packs=tuple(get("packs") or ()),
                mode=get("mode"),
                axis2=bool(get("axis2")),
                scenarios=tuple(get("scenarios") or ()),
                difficulties=tuple(get("difficulty") or ()),
                blind=bool(get("blind", True)),
                seed=get("seed"),
                seeds=None if (seeds := get("seeds")) is None else tuple(seeds),
            ),
            # A run stored before episode keys played its families unkeyed: resumed, it stays unkeyed.
            episode_key=get("episode_key"),
            **{**common, "agent": agent or "reference"},
        )
    if kind == "test":
        return RunPlan(
            selection=EvalSelection(
                paths=tuple(get("paths") or ()), grep=get("grep"), labels=tuple(get("labels") or ())
            ),
            **common,
        )
    raise InputError(
        f"a {kind!r} run cannot be resumed: only runs of `sredrill run` and `sredrill test` can",
        hint="start a new run instead",
    )


def seeds_text(seeds: Sequence[int]) -> str:
    """Seeds as `--seeds` takes them, ranges joined: `0-4`, `0-2,7` (in order, each once)."""
    parts: list[str] = []
    prev: int | None = None
    for n in sorted(set(seeds)):
        if prev is not None and n == prev + 1:
            parts[-1] = f"{parts[-1].partition('-')[0]}-{n}"
        else:
            parts.append(str(n))
        prev = n
    return ",".join(parts)


def _problems(exc: ValueError | TypeError) -> str:
    """What is wrong, field by field, without the values (one of them may be the episode key)."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'plan'}: {e['msg']}" for e in exc.errors())
    return f"{type(exc).__name__}: {exc}"
