"""`--executor`: its spellings, and a Ray run without the ray extra is a usage error that names the extra."""

from __future__ import annotations

import sys

import pytest

from sredrill.engine.ray_executor import RayCluster, is_ray, parse_executor
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
