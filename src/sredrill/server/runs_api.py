"""The runs API: start, cancel, list and read runs, and follow one live over Server-Sent Events.

| route | what |
|---|---|
| `POST /api/runs` | `RunRequest` → 201 `{run_id, status}`: the run goes on in the background |
| `GET /api/runs` | stored runs, newest first (CLI runs included), with live status and counts (`run_row`) |
| `GET /api/runs/{run_id}` | the RunReport so far (or final) and the live status |
| `POST /api/runs/{run_id}/cancel` | stop a run; its finished results stay stored |
| `POST /api/runs/{run_id}/resume` | `ResumeRequest` (optional) → 201 `{run_id, status}`: continue a run's plan |
| `GET /api/runs/{run_id}/events` | Server-Sent Events: `run_started`, `test_started`, `test_finished`, `run_finished` |
| `GET /api/runs/{run_id}/results/{test_id}` | one result and its full trajectory |
| `GET /api/compare?a=A&b=B` | how run B differs from A (`sredrill runs compare --json`'s RunComparison) |

A run calls `engine.run_packs` or `engine.run_eval_files`, the functions `sredrill run` and `sredrill test`
call, with the store the UI reads: a run made on the CLI with the same `--db` shows up here too. A resumed
run calls `engine.launch.resume_run`, which `--resume` calls: its stored plan is checked here as a new run's
body is (its agent, its packs or eval files), so resuming runs nothing a `POST /api/runs` could not.
"""

# No `from __future__ import annotations`: FastAPI reads the route functions' annotations at run time.

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from sredrill.errors import InputError
from sredrill.server.live import LiveRun, LiveStatus, RunEvent, RunGoingOn, RunLauncher
from sredrill.server.wire import error_body, input_error_body, validation_error_body
from sredrill.store.records import RunStatus

if TYPE_CHECKING:
    from fastapi import APIRouter

    from sredrill.engine.plan import IsolationRequest
    from sredrill.engine.prices import Prices
    from sredrill.harness.context import JudgeConfig
    from sredrill.results import RunReport, TestResult
    from sredrill.server.agent_policy import AgentPolicy
    from sredrill.server.gate import RunsGate
    from sredrill.store import RunComparison, RunRecord, Store

__all__ = [
    "MAX_RUN_BODY_BYTES",
    "Pricing",
    "ResumeRequest",
    "RunRequest",
    "compare_body",
    "judge_url_problem",
    "run_row",
    "runs_router",
    "status_of",
]

MAX_RUN_BODY_BYTES: Final = 64 * 1024
_START_TIMEOUT_S: Final = 60.0
_TOO_LARGE: Final = error_body("too_large", ["body"], f"run requests are limited to {MAX_RUN_BODY_BYTES} bytes")
_LIST_RUNS: Final = "list runs at GET /api/runs"
_KEEPALIVE_S: Final = 15.0
"""A comment line is sent after this long without an event, so proxies keep the stream open."""
_Body = TypeVar("_Body", bound=BaseModel)
_SECRET: Final = "judge_api_key"
_NO_KEY: Final = (
    "the judge's API key is never sent in a request: start the server with SREDRILL_JUDGE_API_KEY set, or with "
    "`sredrill serve --judge-api-key-env NAME`"
)


def judge_url_problem(url: str) -> str | None:
    """What is wrong with a judge endpoint (`sredrill serve --judge-base-url`, a request's), or None."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. a malformed IPv6 host
        ok = False
    return None if ok else f"must be an http(s) URL such as http://127.0.0.1:8000/v1, got {url!r}"


class _JudgeFields(BaseModel):
    """The judge of an eval run (`sredrill test --judge-*`); null: the server's (`sredrill serve --judge-*`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    judge_model: str | None = Field(None, min_length=1, max_length=200)
    """The model `judge()` asks; null: the server's `--judge-model`."""
    judge_base_url: str | None = Field(None, min_length=1, max_length=2000)
    """The judge's OpenAI-compatible endpoint (`http(s)://…/v1`); null: the server's `--judge-base-url`. The
    server's judge API key is sent only to the server's own judge endpoint, never to one named here."""
    judge_api_key: None = None
    """Refused: the key comes only from the server's environment."""

    @field_validator("judge_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        problem = None if value is None else judge_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("judge_api_key", mode="before")
    @classmethod
    def _no_key(cls, value: object) -> None:
        if value is not None:
            raise ValueError(_NO_KEY)
        return None

    def judge_settings(self, defaults: "JudgeConfig | None") -> dict[str, Any]:
        """The `Settings` fields of this request's judge: each field given here, else the server's."""
        if defaults is None:
            return {"judge_base_url": self.judge_base_url, "judge_model": self.judge_model}
        base_url = self.judge_base_url or defaults.base_url
        # The server's key is for the server's judge: a request naming another endpoint cannot have it sent there.
        key = defaults.api_key if base_url == defaults.base_url else None
        return {"judge_base_url": base_url, "judge_model": self.judge_model or defaults.model, "judge_api_key": key}


class RunRequest(_JudgeFields):
    """What `POST /api/runs` starts: packs (like `sredrill run`) or eval files (like `sredrill test`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    packs: list[str] = Field(default_factory=list)
    """Built-in pack names, or packs the server was started with (`--pack`). Empty with no `evals`: every
    pack the server serves."""
    evals: list[str] = Field(default_factory=list)
    """Eval files or folders, relative to the server's `--evals` folder; when given, the run is a `test` run."""
    agent: str = Field("reference", min_length=1)
    """An agent spec: a built-in agent (`reference`, `majority`, `keyword`, `random`) or `openai:MODEL`; any
    other (`py:…`, `cmd:…`, `http(s)://…`) only when it matches the server's `--allow-agent` patterns (403
    `agent_not_allowed` otherwise)."""
    base_url: str | None = Field(None, min_length=1)
    """OpenAI-compatible endpoint of an `openai:` agent (`sredrill run --base-url`); needs an `--allow-agent`
    pattern matching the agent spec."""
    mode: Literal["full", "selective", "temporal"] | None = None
    axis2: bool = False
    """Run both axes (full and selective) and report the gap."""
    generate: str | None = Field(None, min_length=1, max_length=500)
    """A generated set to run besides `packs`, as `sredrill run --generate`: `rds:seed=S:count=N[:difficulty=D,D]`
    (made in memory on the server, nothing written). With no `packs`, only the generated set runs."""
    scenarios: list[str] = Field(default_factory=list)
    difficulty: list[Annotated[int, Field(ge=1, le=4)]] = Field(default_factory=list)
    seeds: str | None = Field(None, max_length=1000)
    """The incidents pack's seeds, as `sredrill run --seeds`: `A-B`, `A`, or `A-B,C`; null: its defaults."""
    jobs: int = Field(1, ge=1, le=32)
    repeat: int = Field(1, ge=1, le=100)
    timeout_s: float | None = Field(None, gt=0)
    isolation: Literal["auto", "sandbox", "process", "none"] = "auto"
    """How the agent is kept from the answer keys, as `sredrill run --isolation`: `auto` is `sandbox` where
    bubblewrap works on the server, else `process`."""
    require_isolation: Literal["sandbox", "process", "none"] | None = None
    """The run is refused (400 `invalid_run`) when this level cannot be had on the server."""
    agent_network: Literal["none", "host"] = "none"
    """A sandboxed agent's network: `none` (its tools only) or `host`."""
    agent_env: list[Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^=]+$")]] = Field(
        default_factory=list, max_length=50
    )
    """Names of the server's environment variables passed to the agent beyond the allow-list."""
    agent_dir: str | None = Field(None, min_length=1)
    """The agent's code directory on the server, readable in the sandbox; null: the server's directory."""
    skip_judge: StrictBool | None = None
    """Every judge gives a neutral, skipped verdict (`sredrill test --no-judge`); null: the server's
    (`sredrill serve --no-judge`)."""

    def judged(self) -> str | None:
        """The first judge field this request gives, or None (judges grade eval runs only)."""
        given = ("judge_model", "judge_base_url", "skip_judge")
        return next((name for name in given if getattr(self, name) is not None), None)

    def isolation_request(self) -> "IsolationRequest":
        from sredrill.engine.plan import IsolationRequest

        return IsolationRequest(
            isolation=self.isolation,
            require_isolation=self.require_isolation,
            agent_network=self.agent_network,
            agent_env=tuple(self.agent_env),
            agent_dir=self.agent_dir,
        )


class ResumeRequest(_JudgeFields):
    """What `POST /api/runs/{run_id}/resume` may take besides the stored plan (which it never changes): the
    endpoints, which are never stored (whether judges are skipped is the plan's)."""

    base_url: str | None = Field(None, min_length=1)
    """The endpoint of the run's `openai:` agent (endpoints are never stored); as in `RunRequest`."""
    jobs: int | None = Field(None, ge=1, le=32)
    """Tests side by side this time; null: the plan's."""


def _json(status: int, body: Any) -> Any:
    from fastapi.responses import Response

    data = body.model_dump_json(exclude_none=True) if isinstance(body, BaseModel) else json.dumps(body)
    return Response(content=data, status_code=status, media_type="application/json")


def _not_found(what: str, value: str, hint: str) -> Any:
    return _json(404, error_body("not_found", ["path", what], f"no {what} {value!r}", hint=hint))


async def _body(request: Any, model: type[_Body]) -> Any:
    """The request's JSON body as `model` (empty: the model's defaults), or the 413/422 answer."""
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_RUN_BODY_BYTES:
        return _json(413, _TOO_LARGE)
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_RUN_BODY_BYTES:
            return _json(413, _TOO_LARGE)
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        body = validation_error_body(exc, ["body"], sorted(set(model.model_fields) - {_SECRET}))
        # A key sent by mistake is refused, not echoed back.
        items = [i.model_copy(update={"input": None}) if _SECRET in i.loc else i for i in body.detail]
        return _json(422, body.model_copy(update={"detail": items}))


def _inside(root: Path, path: str) -> Path | None:
    """`path` under `root`, or None when it leaves it (`..`, an absolute path, a symlink out)."""
    target = (root / path).resolve()
    return target if target == root or root in target.parents else None


def runs_router(
    *,
    open_store: "Callable[[], Store]",
    launcher: RunLauncher,
    gate: "RunsGate",
    packs: tuple[str, ...] | None,
    evals: str | None,
    agents: "AgentPolicy",
    judge: "JudgeConfig | None" = None,
    prices: "Prices | None" = None,
) -> "APIRouter":
    """The runs API over the store; runs started here are kept by `launcher`.

    Args:
        open_store: the store runs are written to and read from (`--db`), opened on first use.
        launcher: the server's live runs.
        gate: the token check (`Host` and `Origin` are checked where the app receives a request).
        packs: the packs the server was started with (None: every built-in pack).
        evals: the folder eval files may be read from (None: eval runs are refused).
        agents: which agent specs may run (built-in ones, and `--allow-agent` patterns).
        judge: the judge of eval runs whose request names none (`--judge-*`); None: a request's own only.
        prices: what tokens cost (`--prices`): runs started here are priced as they run, and every run read
            here is priced by it; None: costs as stored.
    """
    from fastapi import APIRouter, Depends, Request
    from fastapi.responses import Response, StreamingResponse

    from sredrill.engine import RunOptions, Settings, run_eval_files, run_packs
    from sredrill.engine.launch import resume_run
    from sredrill.engine.plan import EvalSelection, stored_plan
    from sredrill.scenarios import builtin_pack_names
    from sredrill.store.store import AmbiguousRun

    router = APIRouter(prefix="/api", tags=["runs"])
    pricing = Pricing(prices)
    priced_by = prices.path if prices is not None else None
    served_packs = set(builtin_pack_names()) | {"incidents"} | set(packs or ())
    evals_root = Path(evals).resolve() if evals else None

    def find_run(ref: str, loc: tuple[str, str] = ("path", "run_id")) -> Any:
        """The run id `ref` names, read as `Store.resolve_run` (and the CLI) reads it: a full id, a unique prefix
        or `latest`, the runs going on here included (the engine stores a run before it announces it); else the
        answer: 404 naming the newest runs, or 409 naming the runs `ref` is a prefix of."""
        if launcher.get(ref) is not None:
            return ref
        try:
            return open_store().resolve_run(ref)
        except AmbiguousRun as exc:
            hint = "type more characters of the run id"
            return _json(409, error_body("ambiguous_run", loc, exc.message, allowed=exc.allowed, hint=hint))
        except InputError as exc:
            return _json(404, error_body("not_found", loc, exc.message, allowed=exc.allowed, hint=_LIST_RUNS))

    def plan(request: RunRequest) -> Any:
        """The engine coroutine for `request` (its listener is the LiveRun), or an error answer."""
        options = RunOptions(jobs=request.jobs, repeat=request.repeat, timeout_s=request.timeout_s)
        # Before the spec is resolved: a refused spec is never imported, started or contacted.
        refused = agents.refusal(request.agent, base_url=request.base_url)
        if refused is not None:
            return _json(403, refused)
        judged = request.judged()
        if judged is not None and not request.evals:
            msg = f"{judged} applies to eval-file runs (`evals`) only: packs are graded without a judge"
            return _json(400, error_body("invalid_run", ["body", judged], msg, hint="leave it out, or give evals"))
        skip = request.skip_judge if request.skip_judge is not None else judge is not None and judge.skip
        settings = Settings(
            agent=request.agent, base_url=request.base_url, skip_judge=skip, prices=priced_by,
            **request.judge_settings(judge),
        )  # fmt: skip
        if request.evals:
            if evals_root is None:
                msg = "this server was started without --evals, so it runs no eval files"
                hint = "restart it with: sredrill serve --evals DIR"
                return _json(400, error_body("no_evals", ["body", "evals"], msg, hint=hint))
            paths = []
            for i, name in enumerate(request.evals):
                inside = _inside(evals_root, name)
                if inside is None:
                    msg = f"{name!r} is outside the eval folder the server was started with ({evals_root})"
                    return _json(403, error_body("forbidden_path", ["body", "evals", i], msg))
                paths.append(str(inside))
            return lambda live: run_eval_files(
                paths, settings=settings, options=options, listener=live, store=open_store(),
                isolation=request.isolation_request(),
            )  # fmt: skip
        for i, name in enumerate(request.packs):
            if name not in served_packs:
                msg = f"pack {name!r} is not served here: only built-in packs and the server's --pack folders run"
                return _json(400, error_body("unknown_pack", ["body", "packs", i], msg, allowed=sorted(served_packs)))
        names = request.packs or ([] if request.generate is not None else list(packs or ()))
        return lambda live: run_packs(
            names,
            settings=settings,
            options=options,
            listener=live,
            store=open_store(),
            mode=request.mode,
            axis2=request.axis2,
            scenario_ids=request.scenarios,
            difficulty=request.difficulty,
            seeds=request.seeds,
            isolation=request.isolation_request(),
            generate=request.generate,
        )

    @router.post("/runs", status_code=201, dependencies=[Depends(gate.write)], summary="Start a run")
    async def start_run(request: Request) -> Any:
        """Body: `RunRequest`. Answers once the engine announced the run; follow it at `/api/runs/{id}/events`."""
        body = await _body(request, RunRequest)
        if isinstance(body, Response):
            return body
        make = plan(body)
        if isinstance(make, Response):
            return make
        try:
            live = await asyncio.to_thread(launcher.start, make, timeout_s=_START_TIMEOUT_S)
        except InputError as exc:
            return _json(400, input_error_body(exc, ["body"], "invalid_run"))
        if live.run_id is None:
            return _json(504, error_body("not_started", [], "the run did not start in time"))
        return _json(201, {"run_id": live.run_id, "status": live.status.value})

    @router.get("/runs", dependencies=[Depends(gate.read)], summary="Stored runs, newest first")
    async def list_runs(limit: int = 50) -> Any:
        records = await asyncio.to_thread(open_store().list_runs, max(1, min(limit, 500)))
        rows = [run_row(r, status_of(launcher.get(r.run_id), r.finished), prices=prices) for r in records]
        return _json(200, {"runs": rows})

    @router.get("/runs/{run_id}", dependencies=[Depends(gate.read)], summary="A run's report and status")
    async def get_run(run_id: str) -> Any:
        found = find_run(run_id)
        if isinstance(found, Response):
            return found
        report = await asyncio.to_thread(open_store().report, found)
        if report is None:
            return _not_found("run", run_id, _LIST_RUNS)
        record = open_store().get_run(found)
        status = status_of(launcher.get(found), record is not None and record.finished)
        return _json(200, {"status": status, "report": pricing.report(report).model_dump(mode="json")})

    @router.post("/runs/{run_id}/cancel", status_code=202, dependencies=[Depends(gate.write)], summary="Cancel")
    async def cancel_run(run_id: str) -> Any:
        found = find_run(run_id)
        if isinstance(found, Response):
            return found
        live = launcher.get(found)
        if live is None:
            return _json(409, error_body("not_running", ["path", "run_id"], f"run {found!r} is not running here"))
        if not live.cancel():
            return _json(409, error_body("not_running", ["path", "run_id"], f"run {found!r} already ended"))
        return _json(202, {"run_id": found, "status": "cancelling"})

    def resumable(run_id: str, request: ResumeRequest) -> Any:
        """The engine coroutine resuming `run_id` from its stored plan, or the error answer (as `plan`'s)."""
        store = open_store()
        record = store.get_run(run_id)
        live = launcher.get(run_id)
        if record is None:
            return _not_found("run", run_id, _LIST_RUNS)
        if live is not None and not live.done:
            return _json(409, error_body("run_going_on", ["path", "run_id"], str(RunGoingOn(run_id))))
        if record.finished:
            msg = f"run {run_id!r} finished: only an interrupted or cancelled run can be resumed"
            hint = "start a new one with POST /api/runs"
            return _json(409, error_body("run_finished", ["path", "run_id"], msg, hint=hint))
        try:
            stored, _ = stored_plan(store, run_id)
        except InputError as exc:
            return _json(409, input_error_body(exc, ["path", "run_id"], "not_resumable"))
        refused = None if stored.agent is None else agents.refusal(stored.agent, base_url=request.base_url)
        if refused is not None:
            return _json(403, refused)
        if isinstance(stored.selection, EvalSelection):
            if evals_root is None:
                msg = f"run {run_id!r} runs eval files, and this server was started without --evals"
                hint = "restart it with: sredrill serve --evals DIR, or resume it with sredrill test --resume"
                return _json(400, error_body("no_evals", ["path", "run_id"], msg, hint=hint))
            for path in stored.selection.paths:
                if _inside(evals_root, path) is None:
                    msg = f"run {run_id!r} runs {path!r}, outside the eval folder the server was started with"
                    return _json(403, error_body("forbidden_path", ["path", "run_id"], msg))
        else:
            for name in stored.selection.packs:
                if name not in served_packs:
                    msg = f"run {run_id!r} plays pack {name!r}, which this server does not serve"
                    allowed = sorted(served_packs)
                    return _json(403, error_body("unknown_pack", ["path", "run_id"], msg, allowed=allowed))
        settings = Settings(
            agent=stored.agent, base_url=request.base_url, prices=priced_by, **request.judge_settings(judge)
        )
        return lambda live: resume_run(run_id, settings=settings, listener=live, store=store, jobs=request.jobs)

    @router.post("/runs/{run_id}/resume", status_code=201, dependencies=[Depends(gate.write)], summary="Resume")
    async def resume(run_id: str, request: Request) -> Any:
        """Continue an interrupted or cancelled run from its stored plan: its finished results are kept and only
        the rest runs. Body (optional): `ResumeRequest`. Answers as `POST /api/runs` does."""
        body = await _body(request, ResumeRequest)
        if isinstance(body, Response):
            return body
        found = find_run(run_id)
        if isinstance(found, Response):
            return found
        make = await asyncio.to_thread(resumable, found, body)
        if isinstance(make, Response):
            return make
        try:
            live = await asyncio.to_thread(launcher.start, make, timeout_s=_START_TIMEOUT_S, run_id=found)
        except RunGoingOn as exc:
            return _json(409, error_body("run_going_on", ["path", "run_id"], str(exc)))
        except InputError as exc:
            return _json(400, input_error_body(exc, ["path", "run_id"], "invalid_run"))
        if live.status is LiveStatus.STARTING:
            return _json(504, error_body("not_started", [], "the run did not start in time"))
        return _json(201, {"run_id": found, "status": live.status.value})

    @router.get("/runs/{run_id}/events", dependencies=[Depends(gate.read)], summary="Live progress (SSE)")
    async def events(run_id: str, request: Request) -> Any:
        found = find_run(run_id)
        if isinstance(found, Response):
            return found
        live = launcher.get(found)
        if live is None:
            record = open_store().get_run(found)
            report = open_store().report(found)
            done = {
                "kind": "run_finished",
                "run_id": found,
                "status": status_of(None, record is not None and record.finished),
                "summary": report.summary.model_dump(mode="json") if report else None,
            }
            return StreamingResponse(_once(done), media_type="text/event-stream")
        return StreamingResponse(
            _stream(live, request),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @router.get("/runs/{run_id}/results/{test_id:path}", dependencies=[Depends(gate.read)], summary="One result")
    async def get_result(run_id: str, test_id: str) -> Any:
        found = find_run(run_id)
        if isinstance(found, Response):
            return found
        results = {r.id: r for r in await asyncio.to_thread(open_store().results, found)}
        if test_id not in results:
            return _not_found("test", test_id, f"GET /api/runs/{found} lists the run's results")
        steps = await asyncio.to_thread(open_store().trajectory, found, test_id)
        result = pricing.result(results[test_id]).model_dump(mode="json")
        return _json(200, {"run_id": found, "result": result, "trajectory": steps})

    @router.get("/compare", dependencies=[Depends(gate.read)], summary="Which tests changed between two runs")
    async def compare(a: str, b: str) -> Any:
        found_a, found_b = find_run(a, ("query", "a")), find_run(b, ("query", "b"))
        for found in (found_a, found_b):
            if isinstance(found, Response):
                return found
        cmp = await asyncio.to_thread(open_store().compare, found_a, found_b)
        return _json(200, compare_body(pricing.comparison(cmp)))

    return router


_SO_FAR = "every result stored so far, each counted once"


class Pricing:
    """The server's `--prices`, applied to what the API and UI read from the store (None: costs as stored), as
    `sredrill runs show --prices` and `runs compare --prices` apply theirs."""

    __slots__ = ("prices",)

    def __init__(self, prices: "Prices | None") -> None:
        self.prices = prices

    def report(self, report: "RunReport") -> "RunReport":
        from sredrill.engine.prices import price_report

        return report if self.prices is None else price_report(report, self.prices)

    def result(self, result: "TestResult") -> "TestResult":
        from sredrill.engine.prices import price_result

        return result if self.prices is None else price_result(result, self.prices)

    def comparison(self, cmp: "RunComparison") -> "RunComparison":
        from sredrill.engine.prices import price_comparison

        return cmp if self.prices is None else price_comparison(cmp, self.prices)


def run_row(record: "RunRecord", status: str, *, prices: "Prices | None" = None) -> dict[str, Any]:
    """A stored run as `GET /api/runs` lists it (and the UI's runs page shows it).

    `counts` are over every result of the run, each counted once (for a running run, those stored so far), with
    their pass rate (`pass_rate_ci`: its 95% Wilson interval) and what they count: the same numbers as the top of
    its summary and of its run page.
    `summary` is the finished run's whole summary (its sections: RCA per axis, incidents, tests), else null.
    """
    c = record.counts
    summary = record.summary
    if summary is not None and prices is not None:
        from sredrill.engine.prices import price_summary

        summary = price_summary(summary, prices)
    # A finished run's headline is its summary's pass@1; a run going on has only its final-status counts so far.
    rate = summary.pass_rate if summary is not None else c.pass_rate
    ci = summary.pass_rate_ci if summary is not None else c.pass_rate_ci
    return {
        "run_id": record.run_id,
        "kind": record.kind,
        "agent": record.agent,
        "mode": record.mode,
        "started_at": record.started_at.isoformat(),
        "finished": record.finished,
        "duration_ms": record.duration_ms,
        "status": status,
        "counts": {
            **c.model_dump(),
            "pass_rate": rate,
            "pass_rate_ci": ci,
            "counts": summary.counts if summary is not None else _SO_FAR,
        },
        "pass_rate": rate,
        "pass_rate_ci": ci,
        "summary": summary.model_dump(mode="json") if summary is not None else None,
    }


def compare_body(cmp: "RunComparison") -> dict[str, Any]:
    """The body of `GET /api/compare`: the `store.RunComparison` as JSON, exactly what `sredrill runs compare
    --json` prints (each test's direction and UI pages in both runs, every pass rate with its interval, McNemar's
    paired test)."""
    return cmp.model_dump(mode="json")


def status_of(live: LiveRun | None, finished: bool) -> str:
    """A run's status on every surface: its live one while this server runs it, else the store's
    (`store.RunStatus`, as `sredrill runs list` says it)."""
    if live is not None:
        return live.status.value
    return (RunStatus.FINISHED if finished else RunStatus.INTERRUPTED).value


def _sse(event: dict[str, Any] | RunEvent) -> bytes:
    if isinstance(event, dict):
        kind, data = event["kind"], json.dumps(event)
    else:
        kind, data = event.kind, event.model_dump_json()
    return f"event: {kind}\ndata: {data}\n\n".encode()


async def _once(event: dict[str, Any]) -> AsyncIterator[bytes]:
    yield _sse(event)


async def _stream(live: LiveRun, request: Any) -> AsyncIterator[bytes]:
    seen = 0
    wake = live.subscribe()
    try:
        while True:
            wake.clear()  # before reading: an event added after the read sets it again
            batch = live.events_after(seen)
            if not batch:
                try:
                    await asyncio.wait_for(wake.wait(), timeout=_KEEPALIVE_S)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    yield b": keep-alive\n\n"
                continue
            seen += len(batch)
            for event in batch:
                yield _sse(event)
                if event.kind == "run_finished":
                    return
    finally:
        live.unsubscribe(wake)
