"""Isolation levels: resolving `--isolation` / `--require-isolation`, and the level a report records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sredrill.agents.spec import CONNECTORS
from sredrill.errors import InputError
from sredrill.isolation import (
    AgentNetwork,
    Isolation,
    IsolationPolicy,
    IsolationUnavailable,
    recorded_level,
    resolve_isolation,
    sandbox_problem,
)
from sredrill.isolation.levels import BUILTIN_AGENTS, BUILTIN_PREFIXES
from tests.isolation import require_sandbox


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A PATH without bwrap on it: the machine as one without bubblewrap installed."""
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox_problem.cache_clear()
    yield
    sandbox_problem.cache_clear()


def test_without_bwrap_auto_falls_back_to_process_with_a_warning(no_bwrap: None, tmp_path: Path) -> None:
    assert sandbox_problem() == "bwrap is not installed: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
    policy = resolve_isolation("auto", launch_dir=tmp_path)
    assert policy.level is Isolation.PROCESS
    assert policy.recorded == "process"
    assert policy.warning is not None
    assert policy.warning.startswith("sandbox unavailable (bwrap is not installed")
    assert policy.warning.endswith("agents run at process level, where disk and /proc reads are not prevented")


def test_without_bwrap_sandbox_or_a_sandbox_floor_fails_fast(no_bwrap: None, tmp_path: Path) -> None:
    with pytest.raises(IsolationUnavailable, match="--isolation sandbox is not available here: bwrap is not inst"):
        resolve_isolation("sandbox", launch_dir=tmp_path)
    with pytest.raises(IsolationUnavailable, match="the level in force is process: bwrap is not installed") as e:
        resolve_isolation("auto", require="sandbox", launch_dir=tmp_path)
    assert isinstance(e.value, InputError)
    assert e.value.hint is not None and "apt-get install bubblewrap" in e.value.hint
    assert resolve_isolation("process", require="process", launch_dir=tmp_path).level is Isolation.PROCESS


def test_a_level_below_the_floor_fails_and_says_how_to_raise_it(tmp_path: Path) -> None:
    with pytest.raises(IsolationUnavailable, match="--require-isolation process: the level in force is none") as e:
        resolve_isolation("none", require="process", launch_dir=tmp_path)
    assert e.value.hint is not None and "raise --isolation to process" in e.value.hint
    assert resolve_isolation("none", require="none", launch_dir=tmp_path).recorded == "none"


def test_with_bwrap_auto_is_sandbox(tmp_path: Path) -> None:
    require_sandbox()
    policy = resolve_isolation(launch_dir=tmp_path)
    assert (policy.level, policy.warning, policy.recorded) == (Isolation.SANDBOX, None, "sandbox")
    host = resolve_isolation("sandbox", require="sandbox", network="host", launch_dir=tmp_path)
    assert host.network is AgentNetwork.HOST and host.recorded == "sandbox+host-network"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"requested": "sandboxed"}, "--isolation 'sandboxed' is not a known value; did you mean 'sandbox'?"),
        ({"require": "auto"}, "--require-isolation 'auto' is not a known value"),
        ({"network": "hots"}, "--agent-network 'hots' is not a known value; did you mean 'host'?"),
        ({"agent_env": ["OPENAI_API_KEY=sk-1"]}, "--agent-env 'OPENAI_API_KEY=sk-1' is not an environment variable"),
        ({"agent_dir": "no/such/dir"}, "--agent-dir 'no/such/dir' is not a directory"),
    ],
)
def test_bad_values_name_what_is_wrong_and_the_allowed_ones(
    kwargs: dict[str, object], message: str, tmp_path: Path
) -> None:
    with pytest.raises(InputError) as e:
        resolve_isolation(launch_dir=tmp_path, **kwargs)  # type: ignore[arg-type]
    assert not isinstance(e.value, IsolationUnavailable)
    assert e.value.message.startswith(message)
    if "requested" in kwargs:
        assert e.value.allowed == ["auto", "none", "process", "sandbox"]
    if "require" in kwargs:
        assert e.value.allowed == ["none", "process", "sandbox"]


def test_paths_resolve_against_the_launch_dir(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    policy = resolve_isolation(
        "process",
        agent_dir="agents",
        masked=[Path("packs"), tmp_path / "packs", Path("/abs/store.db")],
        agent_env=["OPENAI_API_KEY", "OPENAI_API_KEY"],
        launch_dir=tmp_path,
    )
    assert policy.agent_dir == tmp_path.resolve() / "agents"
    assert policy.code_dir() == tmp_path.resolve() / "agents"
    assert policy.masked == (tmp_path.resolve() / "packs", Path("/abs/store.db"))
    assert policy.agent_env == ("OPENAI_API_KEY",)
    assert resolve_isolation("none", launch_dir=tmp_path).code_dir() == tmp_path.resolve()


def test_recorded_level_per_agent_kind(tmp_path: Path) -> None:
    policy = IsolationPolicy(level=Isolation.PROCESS, launch_dir=tmp_path)
    assert recorded_level(policy, "http://127.0.0.1:9000/agent") == "external"
    assert recorded_level(policy, "https://agents.example/rca") == "external"
    for spec in ("reference", "k8s-reference", "majority", "majority:rds_postgres", "redteam:stuffer", "openai:gpt"):
        assert recorded_level(policy, spec) == "builtin", spec
    assert recorded_level(policy, "py:examples.agents.echo_agent:agent") == "process"
    assert recorded_level(policy, "cmd:python examples/agents/x.py") == "process"
    assert recorded_level(None, "cmd:./agent") == "none"


def test_every_connector_is_classified() -> None:
    # BUILTIN_AGENTS mirrors CONNECTORS (levels.py sits above the agents layer): a new built-in agent must be
    # listed there, or its runs would be recorded at the user's level.
    user_code = {"py:", "cmd:", "http://", "https://"}
    ours = {k for k in CONNECTORS if k not in user_code}
    assert ours == set(BUILTIN_AGENTS) | set(BUILTIN_PREFIXES)
