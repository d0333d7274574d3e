"""The run's store writer: one thread per run (STYLE #18), so the event loop never waits for a commit."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from sredrill.errors import StoreError
from sredrill.results import TestResult
from sredrill.text import scrub
from sredrill.traces import Span

__all__ = ["ResultWriter"]


class ResultWriter:
    """One writer thread per run (STYLE #18): results go to SQLite as they complete, in completion order, and the
    event loop never waits for a commit. When results arrive faster than one commit each, the thread writes
    everything queued in one transaction.

    The failure boundary is one result: the store writes a result it cannot keep as it was as an errored one
    (`as_stored` gives the run's results as stored, for its report). When the database itself fails (disk
    full, read-only: a `StoreError`), nothing more is written but the run goes on in memory; `store_error`
    says why, after `close`. Any other failure is a bug: it stops the run at the next result.
    """

    _BATCH = 256

    def __init__(self, store: Any) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[tuple[str, tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._store_error: StoreError | None = None
        self._replaced: dict[str, TestResult] = {}
        self._written: dict[str, TestResult] = {}
        self._thread = threading.Thread(target=self._drain, name="sredrill-store", daemon=True)
        self._thread.start()

    @property
    def store_error(self) -> StoreError | None:
        """Why the database stopped taking writes, if it did (read it after `close`)."""
        return self._store_error

    def as_stored(self, results: Sequence[TestResult]) -> list[TestResult]:
        """`results` with each one the store changed (text repaired, or errored) as it was stored; after `close`."""
        return [self._replaced.get(r.id, r) for r in results]

    def written_as(self, results: Sequence[TestResult]) -> set[str]:
        """Ids of `results` the store holds exactly as given (these very objects were written); after `close`.

        `Store.finish_run` skips them rather than encode and write every result a second time.
        """
        return {r.id for r in results if self._written.get(r.id) is r}

    def write(
        self, run_id: str, result: TestResult, steps: list[dict[str, JsonValue]] | None, spans: list[tuple[str, Span]]
    ) -> None:
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
            if self._error is not None or self._store_error is not None:
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
                    # A repaired id (it held lone surrogates) is no longer the engine's: map it back.
                    given = {scrub(result.id)[0]: result.id for result, *_ in batch}
                    changed = {}
                    for stored in self._store.write_results(run_id, batch):
                        changed[given.get(stored.id, stored.id)] = stored
                    self._replaced.update(changed)
                    for result, *_ in batch:
                        self._written[result.id] = changed.get(result.id, result)
            except StoreError as exc:  # the database failed: the run goes on in memory, the CLI exits 3
                self._store_error = exc
            except Exception as exc:  # kept and re-raised on the event loop's side; never swallowed
                self._error = exc

    async def close(self) -> None:
        """Wait for every write (one thread hop); raise the first failure that is not a `StoreError`."""
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)
        self._raise()
