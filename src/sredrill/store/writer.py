"""The run's store writer: one thread per run (STYLE #18), so the event loop never waits for a commit."""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any

from sredrill.results import TestResult
from sredrill.traces import Span

__all__ = ["ResultWriter"]


class ResultWriter:
    """One writer thread per run (STYLE #18): results go to SQLite as they complete, in completion order, and the
    event loop never waits for a commit. When results arrive faster than one commit each, the thread writes
    everything queued in one transaction. A failed write stops the run at the next result.
    """

    _BATCH = 256

    def __init__(self, store: Any) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[tuple[str, tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="sredrill-store", daemon=True)
        self._thread.start()

    def write(self, run_id: str, result: TestResult, steps: list[dict] | None, spans: list[tuple[str, Span]]) -> None:
        """The result, its trajectory and its spans, in one transaction."""
        self._raise()
        self._queue.put(("result", (run_id, result, steps, spans)))

    def write_spans(self, run_id: str, test_id: str, spans: list[tuple[str, Span]]) -> None:
        if spans:
            self._raise()
            self._queue.put(("spans", (run_id, test_id, spans)))

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _drain(self) -> None:
        done = False
        while not done:
            items = [self._queue.get()]
            while len(items) < self._BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if self._error is not None:
                done = None in items
                continue
            try:
                results: dict[str, list[tuple[Any, ...]]] = {}
                for item in items:
                    if item is None:
                        done = True
                    elif item[0] == "result":
                        run_id, *rest = item[1]
                        results.setdefault(run_id, []).append(tuple(rest))
                    else:
                        self._store.write_spans(*item[1])
                for run_id, batch in results.items():
                    self._store.write_results(run_id, batch)
            except Exception as exc:  # kept and re-raised on the event loop's side; never swallowed
                self._error = exc

    async def close(self) -> None:
        """Wait for every write (one thread hop); raise the first failure."""
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)
        self._raise()
