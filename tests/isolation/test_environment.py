"""The agent's environment: an allow-list at process and sandbox level, the driver's whole at none."""

from __future__ import annotations

from pathlib import Path

from sredrill.isolation import Isolation, IsolationPolicy, agent_environment

DRIVER = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "https_proxy": "http://proxy:3128",
    "NO_PROXY": "localhost",
    "OPENAI_API_KEY": "sk-user",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "PYTHONPATH": "/work/packs",
    "SREDRILL_JUDGE_API_KEY": "sk-judge",
    "SREDRILL_JUDGE_MODEL": "gpt-x",
    "SREDRILL_DB": "/work/.sredrill/sredrill.db",
    "SREDRILL_DIR": "/work/.sredrill",
    "SREDRILL_SERVER_TOKEN": "server",
    "SREDRILL_API_KEY": "k",
    "SREDRILL_ADMIN_PASSWORD": "p",
    "SREDRILL_SIGNING_SECRET": "s",
    "SREDRILL_RUN_TOKEN": "stale",
    "SREDRILL_LOG_LEVEL": "debug",
}
OWN = {"SREDRILL_TOOLS_URL": "http://127.0.0.1:9/", "SREDRILL_RUN_TOKEN": "run-token"}


def policy(level: Isolation, agent_env: tuple[str, ...] = ()) -> IsolationPolicy:
    return IsolationPolicy(level=level, agent_env=agent_env, launch_dir=Path("/work"))


def test_at_none_the_agent_gets_everything_as_before() -> None:
    assert agent_environment(None, DRIVER, OWN) == {**DRIVER, **OWN}
    assert agent_environment(policy(Isolation.NONE), DRIVER) == DRIVER


def test_at_process_and_sandbox_only_the_allow_list_and_our_own_pass() -> None:
    for level in (Isolation.PROCESS, Isolation.SANDBOX):
        env = agent_environment(policy(level), DRIVER, OWN)
        assert env == {
            "PATH": "/usr/bin",
            "HOME": "/home/u",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TZ": "UTC",
            "https_proxy": "http://proxy:3128",
            "NO_PROXY": "localhost",
            "SREDRILL_LOG_LEVEL": "debug",
            "SREDRILL_TOOLS_URL": "http://127.0.0.1:9/",
            "SREDRILL_RUN_TOKEN": "run-token",
        }


def test_agent_env_names_pass_when_the_driver_has_them() -> None:
    env = agent_environment(policy(Isolation.PROCESS, ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")), DRIVER)
    assert env["OPENAI_API_KEY"] == "sk-user"
    assert "ANTHROPIC_API_KEY" not in env
    assert "SREDRILL_JUDGE_API_KEY" not in env
    assert "SREDRILL_RUN_TOKEN" in env  # the agent's own credential for its tool server
