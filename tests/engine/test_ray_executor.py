"""`--executor`: its spellings, and a Ray run without the ray extra is a usage error that names the extra."""

from __future__ import annotations

import asyncio
import sys

import pytest

from sredrill.engine.ray_executor import RayCluster, RayWorker, is_ray, parse_executor
from sredrill.errors import InputError, MissingExtra


@pytest.mark.parametrize(("given", "kept"), [
    ("local", "local"), ("ray", "ray"), (" ray ", "ray"), ("ray:127.0.0.1:6379", "ray:127.0.0.1:6379"),
    ("ray:head.example:10001", "ray:head.example:10001"),
])  # fmt: skip
def test_an_executor_has_one_spelling(given: str, kept: str) -> None:
    assert parse_executor(given) == kept
    assert is_ray(kept) == kept.startswith("ray")


@pytest.mark.parametrize("given", ["", "rya", "ray:", "ray:6379", "ray:host:port", "ray:host:0", "ray:h:70000", "k8s"])
def test_a_bad_executor_names_the_flag_and_the_forms(given: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_executor(given)
    assert raised.value.field == "--executor" and raised.value.allowed == ["local", "ray", "ray:HOST:PORT"]


def test_ray_without_the_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed: `import ray` raises ImportError
    with pytest.raises(MissingExtra) as raised:
        RayCluster("ray").open()
    assert raised.value.extra == "ray" and "pip install 'sredrill[ray]'" in (raised.value.hint or "")


class _Never:
    """A stand-in for the `ray` module whose actors never start (a cluster with no free CPU)."""

    class exceptions:  # as Ray spells its module
        RayError = RuntimeError
        RayActorError = RuntimeError

    def __init__(self) -> None:
        self.killed = 0

    def remote(self, **_: object) -> object:
        class Actor:
            class ready:
                @staticmethod
                def remote(*_: object) -> object:
                    return asyncio.get_running_loop().create_future()  # never done

        class Made:
            @staticmethod
            def remote() -> object:
                return Actor

        return lambda _cls: Made

    def kill(self, actor: object, *, no_restart: bool) -> None:
        self.killed += 1


def test_an_actor_that_never_starts_is_a_usage_error_and_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    from sredrill.engine import ray_executor

    monkeypatch.setattr(ray_executor, "START_TIMEOUT_S", 0.05)
    ray = _Never()
    worker = RayWorker("sredrill.engine.pack_workers:PackHandler", ray=ray)
    assert worker.pid is None and not worker.alive
    with pytest.raises(InputError) as raised:
        asyncio.run(worker.call({"op": "init"}, timeout_s=5))
    assert "did not start within 0.05s" in raised.value.message and "ray status" in (raised.value.hint or "")
    assert ray.killed == 1 and not worker.alive and worker.pid == 0  # gone from its pool
