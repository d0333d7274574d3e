"""Training data from stored runs: one record per episode (its chat messages, tool calls and results, reward and
grade), written as JSON lines or Parquet for supervised fine-tuning and offline RL (`sredrill export`).

A record has the same fields in both formats, every field in every record (null when it does not apply), so
Hugging Face `datasets` loads either into one table:

    >>> from sredrill.store import Store
    >>> from sredrill.store.export import episode_records, write_export
    >>> with Store(".sredrill/sredrill.db") as store:  # doctest: +SKIP
    ...     write_export(episode_records(store, store.resolve_run("latest")), "episodes.jsonl", "jsonl")

The messages are in OpenAI's chat format, the one chat templates read: a tool call's `arguments` and a tool
message's `content` are JSON text, and `tools` is the JSON text of the tools the agent was offered (RCA
episodes: their domain's; null when unknown), `json.loads` it for `apply_chat_template(tools=...)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from sredrill.errors import InputError, MissingExtra
from sredrill.results import ResultKind, TestResult, TestStatus

if TYPE_CHECKING:
    from sredrill.store.store import Store

__all__ = ["EXPORT_FORMATS", "ExportFormat", "chat_messages", "episode_record", "episode_records", "write_export"]

ExportFormat = Literal["jsonl", "parquet"]
EXPORT_FORMATS: Final[tuple[ExportFormat, ...]] = ("jsonl", "parquet")
_BATCH: Final = 256
"""Records per Parquet row group: a run's trajectories never all sit in memory."""


def episode_records(store: Store, run_id: str, *, passed_only: bool = False) -> Iterator[dict[str, Any]]:
    """The run's episodes as export records, in the store's result order, one trajectory read at a time.

    Args:
        store: the store holding the run.
        run_id: a full run id (`Store.resolve_run` turns what a user typed into one).
        passed_only: only the episodes that passed (demonstrations for supervised fine-tuning).

    Raises:
        InputError: the run is not in the store.
    """
    record = store.get_run(run_id)
    if record is None:
        raise InputError(f"run {run_id!r} is not in the store", hint="list runs with: sredrill runs list")
    for result in store.results(run_id):
        if passed_only and result.status != TestStatus.PASSED:
            continue
        steps = store.trajectory(run_id, result.id) or []
        yield episode_record(result, steps, run_id=run_id, agent=record.agent)


def episode_record(
    result: TestResult, steps: Sequence[Mapping[str, Any]], *, run_id: str, agent: str | None
) -> dict[str, Any]:
    """One episode's record: who ran what, the chat messages, the tool calls and results, the reward and grade.

    `reward` is the graded score (0–1) when the episode has one, else 1.0 for passed and 0.0 for failed; null for
    an errored episode (the agent or harness broke: no grade to learn from).
    """
    calls = [s for s in steps if s.get("kind") == "tool_call"]
    results = [s for s in steps if s.get("kind") == "tool_result"]
    return {
        "run_id": run_id,
        "test_id": result.id,
        "kind": str(result.kind),
        "pack": result.file,
        "agent": agent,
        "axis": result.axis,
        "mode": result.mode,
        "difficulty": result.difficulty,
        "labels": list(result.labels),
        "status": str(result.status),
        "reward": _reward(result),
        "messages": chat_messages(steps),
        "tools": _tools_json(result, calls),
        "tool_calls": [
            {
                "call_id": _text(c.get("call_id")),
                "name": _text(c.get("name")),
                "arguments": _json(c.get("args") or {}),
                "verified": c.get("verified"),
            }
            for c in calls
        ],
        "tool_results": [
            {
                "call_id": _text(r.get("call_id")),
                "name": _text(r.get("name")),
                "content": _json(r.get("result")),
                "error": r.get("error"),
                "verified": r.get("verified"),
            }
            for r in results
        ],
        "grade": {
            "status": str(result.status),
            "score": result.score,
            "failure_reason": result.failure_reason,
            "components": [{"name": k, "score": v} for k, v in (result.score_components or {}).items()],
            "checks": [
                {"kind": str(s.kind), "name": s.name, "role": str(s.role), "passed": s.passed, "message": s.message}
                for s in result.signals
            ],
        },
        "total_tokens": result.usage.total_tokens if result.usage is not None else None,
    }


def chat_messages(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A trajectory as OpenAI chat messages: the prompt as `user`; the agent's text and thinking as `assistant`
    content, its tool calls on that assistant message; each result as a `tool` message; the answer last."""
    messages: list[dict[str, Any]] = []

    def assistant() -> dict[str, Any]:
        last = messages[-1] if messages else None
        if last is None or last["role"] != "assistant" or last["tool_calls"]:
            last = _message("assistant")
            messages.append(last)
        return last

    for step in steps:
        kind = step.get("kind")
        if kind == "user":
            messages.append(_message("user", content=_text(step.get("content"))))
        elif kind in ("assistant", "thinking", "response"):
            target = assistant()
            text = _text(step.get("content"))
            target["content"] = f"{target['content']}\n\n{text}" if target["content"] else text
        elif kind == "tool_call":
            target = messages[-1] if messages and messages[-1]["role"] == "assistant" else assistant()
            function = {"name": _text(step.get("name")), "arguments": _json(step.get("args") or {})}
            call = {"id": _text(step.get("call_id")), "type": "function", "function": function}
            target["tool_calls"] = [*(target["tool_calls"] or []), call]
        elif kind == "tool_result":
            error = step.get("error")
            content = f"error: {error}" if error else _json(step.get("result"))
            messages.append(
                _message("tool", content=content, tool_call_id=_text(step.get("call_id")), name=_text(step.get("name")))
            )
    return messages


def write_export(records: Iterable[Mapping[str, Any]], path: str | Path, fmt: str) -> int:
    """Write `records` to `path` as JSON lines or Parquet; the number written.

    Raises:
        InputError: an unknown format, or a path that cannot be written.
        MissingExtra: Parquet without pyarrow (the `export` extra).
    """
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {fmt!r}", allowed=list(EXPORT_FORMATS), hint="--format jsonl")
    target = Path(path)
    try:
        return _write_jsonl(records, target) if fmt == "jsonl" else _write_parquet(records, target)
    except OSError as exc:
        raise InputError(f"cannot write the export: {exc.strerror or exc}", path=str(target)) from exc


def _write_jsonl(records: Iterable[Mapping[str, Any]], path: Path) -> int:
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written


def _write_parquet(records: Iterable[Mapping[str, Any]], path: Path) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingExtra("`sredrill export --format parquet`", "export") from exc
    schema = _arrow_schema(pa)
    written = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[Mapping[str, Any]] = []
        for record in records:
            batch.append(record)
            if len(batch) == _BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                written, batch = written + len(batch), []
        if batch or not written:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            written += len(batch)
    return written


def _arrow_schema(pa: Any) -> Any:
    """The record's fields as Arrow types: written once, so every row group (and a run with no episode) agrees."""
    text, flag, number = pa.string(), pa.bool_(), pa.float64()
    call = pa.struct([("id", text), ("type", text), ("function", pa.struct([("name", text), ("arguments", text)]))])
    message = pa.struct(
        [("role", text), ("content", text), ("tool_calls", pa.list_(call)), ("tool_call_id", text), ("name", text)]
    )
    check = pa.struct([("kind", text), ("name", text), ("role", text), ("passed", flag), ("message", text)])
    grade = pa.struct([
        ("status", text), ("score", number), ("failure_reason", text),
        ("components", pa.list_(pa.struct([("name", text), ("score", number)]))), ("checks", pa.list_(check)),
    ])  # fmt: skip
    return pa.schema([
        ("run_id", text), ("test_id", text), ("kind", text), ("pack", text), ("agent", text), ("axis", pa.int64()),
        ("mode", text), ("difficulty", pa.int64()), ("labels", pa.list_(text)), ("status", text), ("reward", number),
        ("messages", pa.list_(message)), ("tools", text),
        ("tool_calls", pa.list_(pa.struct(
            [("call_id", text), ("name", text), ("arguments", text), ("verified", flag)]
        ))),
        ("tool_results", pa.list_(pa.struct(
            [("call_id", text), ("name", text), ("content", text), ("error", text), ("verified", flag)]
        ))),
        ("grade", grade), ("total_tokens", pa.int64()),
    ])  # fmt: skip


def _message(
    role: str, *, content: str = "", tool_call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": None, "tool_call_id": tool_call_id, "name": name}


def _reward(result: TestResult) -> float | None:
    if result.status == TestStatus.ERRORED:
        return None
    if result.score is not None:
        return result.score
    return 1.0 if result.status == TestStatus.PASSED else 0.0


def _tools_json(result: TestResult, calls: Sequence[Mapping[str, Any]]) -> str | None:
    """The OpenAI-format tools an RCA episode was offered (its domain's, named by the tools it called); null for
    other episodes, whose tools the store does not keep."""
    if result.kind != ResultKind.RCA:
        return None
    from sredrill.scenarios.domain import domain_of_tools

    # The tools it called name the domain; loading its pack (seconds for a generated one) only when they do not
    # (an agent that read the alert alone).
    domain = domain_of_tools(_text(c.get("name")) for c in calls)
    name = domain.name if domain is not None else _pack_domain(result.file) if result.file else None
    return None if name is None else _domain_tools(name, result.mode == "temporal")


@cache
def _pack_domain(pack: str) -> str | None:
    """The domain of a pack still loadable by its name (a built-in one); None for one that is not."""
    from sredrill.errors import SredrillError
    from sredrill.scenarios import load_pack

    try:
        return load_pack(pack).domain or None
    except SredrillError:
        return None


@cache
def _domain_tools(domain_name: str, temporal: bool) -> str:
    from sredrill.evidence import tool_specs
    from sredrill.evidence.clock import wait_spec
    from sredrill.scenarios.domain import get_domain

    specs = tool_specs(get_domain(domain_name))
    if temporal:
        specs.insert(len(specs) - 1, wait_spec())
    return _json([
        {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.input_schema}}
        for s in specs
    ])  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
