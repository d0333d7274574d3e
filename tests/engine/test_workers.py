"""`sredrill.workers`: real worker processes answering, timing out, dying and being replaced."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sredrill.workers import RemoteError, Worker, WorkerDied, WorkerPool, attached_trace
from tests.support.processes import is_running, wait_until

PROBE = "tests.support.worker_handlers:Probe"


@pytest.fixture
async def worker():
    w = Worker(PROBE, role="test")
    yield w
    w.kill()


async def test_a_worker_answers_and_keeps_its_state_between_calls(worker: Worker) -> None:
    first = await worker.call({"op": "echo", "value": "é\ud800"}, timeout_s=60)
    second = await worker.call({"op": "echo", "value": [1, {"a": None}]}, timeout_s=60)
    # Lone surrogates cannot be stored or printed: they arrive replaced (sredrill.text.scrub).
    assert first["echo"] == "é\ufffd" and second["echo"] == [1, {"a": None}]
    assert first["pid"] == second["pid"] == worker.pid
    assert (first["calls"], second["calls"]) == (1, 2)


async def test_a_blocking_call_past_its_timeout_kills_the_worker(worker: Worker) -> None:
    await worker.ready()
    pid = worker.pid
    assert pid is not None
    with pytest.raises(TimeoutError):
        await worker.call({"op": "block", "seconds": 30}, timeout_s=0.5)
    assert not worker.alive
    assert wait_until(lambda: not is_running(pid))


async def test_a_cancelled_call_carries_the_frames_the_worker_was_suspended_in(worker: Worker) -> None:
    sleeping = asyncio.Event()

    async def on_ask(_: object) -> None:
        sleeping.set()

    call = asyncio.ensure_future(worker.call({"op": "sleep", "seconds": 60}, timeout_s=None, on_ask=on_ask))
    await sleeping.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await call
    assert not worker.alive  # killed after it said where it was
    trace = attached_trace(caught.value)
    assert trace is not None
    where = [(Path(f.path).name, f.function) for f in trace.frames]
    assert ("worker_handlers.py", "handle") in where and where.index(("worker_handlers.py", "_nap")) > 0, where
    assert trace.frames[-1].function == "sleep"  # the innermost: asyncio's own, trimmed when shown


async def test_a_cancelled_call_of_a_blocked_worker_carries_no_frames_and_still_kills_it(worker: Worker) -> None:
    await worker.ready()
    call = asyncio.ensure_future(worker.call({"op": "block", "seconds": 30}, timeout_s=None))
    await asyncio.sleep(0.3)  # blocked in the handler or not yet there: either way it cannot answer
    call.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await call
    assert attached_trace(caught.value) is None
    assert not worker.alive


async def test_os_exit_during_a_call_names_the_exit_code(worker: Worker) -> None:
    with pytest.raises(WorkerDied, match="test worker exited with code 3") as caught:
        await worker.call({"op": "exit", "code": 3}, timeout_s=60)
    assert caught.value.returncode == 3
    assert not worker.alive


@pytest.mark.parametrize("kind", ["SystemExit", "KeyboardInterrupt", "Custom"])
async def test_a_base_exception_in_the_handler_is_a_remote_error_and_the_worker_goes_on(
    worker: Worker, kind: str
) -> None:
    with pytest.raises(RemoteError) as caught:
        await worker.call({"op": "raise", "kind": kind, "message": "bye"}, timeout_s=60)
    assert caught.value.type_name == kind and caught.value.message == "bye"
    assert "Traceback" in caught.value.traceback
    assert (await worker.call({"op": "echo", "value": 1}, timeout_s=60))["echo"] == 1


async def test_questions_from_the_worker_are_answered_by_the_driver(worker: Worker) -> None:
    async def answer(body):
        return body["n"] * 10

    assert await worker.call({"op": "ask", "times": 3}, timeout_s=60, on_ask=answer) == [0, 10, 20]


async def test_output_is_captured_at_fd_level_and_capped(worker: Worker) -> None:
    reply = await worker.call({"op": "print", "text": "x" * 5000, "limit": 1024}, timeout_s=60)
    assert reply["stdout"].startswith("x" * 1024) and "more bytes cut" in reply["stdout"]
    assert reply["stderr"] == "to fd 2\n"
    assert reply["truncated"] == ["stdout"]


async def test_killing_a_worker_kills_the_process_groups_it_reported(worker: Worker) -> None:
    child = (await worker.call({"op": "spawn"}, timeout_s=60))["pid"]
    assert wait_until(lambda: child in worker.groups, deadline_s=5) or child in worker.groups
    assert is_running(child)
    worker.kill()
    assert wait_until(lambda: not is_running(child))


async def test_call_sync_before_the_loop_then_async_calls() -> None:
    w = Worker(PROBE, role="test")
    try:
        assert w.call_sync({"op": "echo", "value": "sync"}, timeout_s=60)["echo"] == "sync"
        with pytest.raises(RemoteError, match="unknown op"):
            w.call_sync({"op": "nope"}, timeout_s=60)
        assert (await w.call({"op": "echo", "value": "async"}, timeout_s=60))["echo"] == "async"
    finally:
        w.kill()


async def test_a_handler_that_cannot_be_imported_is_a_worker_death() -> None:
    w = Worker("tests.support.no_such_module:Nothing", role="test")
    with pytest.raises(WorkerDied, match="test worker exited with code 70 \\(ModuleNotFoundError"):
        await w.call({"op": "echo"}, timeout_s=60)


async def test_a_pool_reuses_idle_workers_and_replaces_dead_ones() -> None:
    pool = WorkerPool(lambda: Worker(PROBE, role="test"), size=2)
    try:
        async with pool.worker() as w:
            assert w is not None
            first = (await w.call({"op": "echo"}, timeout_s=60))["pid"]
        async with pool.worker() as w:
            assert w is not None
            assert (await w.call({"op": "echo"}, timeout_s=60))["pid"] == first
            with pytest.raises(WorkerDied):
                await w.call({"op": "exit", "code": 1}, timeout_s=60)
        async with pool.worker() as w:
            assert w is not None
            assert (await w.call({"op": "echo"}, timeout_s=60))["pid"] != first

        async def two(i: int) -> int:
            async with pool.worker() as w:
                assert w is not None
                return (await w.call({"op": "echo", "value": i}, timeout_s=60))["pid"]

        pids = await asyncio.gather(*(two(i) for i in range(6)))
        assert 1 <= len(set(pids)) <= 2
    finally:
        pool.kill_all()
