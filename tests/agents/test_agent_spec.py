"""Agent specs: each way a spec can be wrong gets its own clear error (one test per kind)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from sredrill.agents import Agent, AgentSpec, parse_agent_spec, resolve_agent
from sredrill.agents.spec import CONNECTORS
from sredrill.errors import AgentSpecError, InputError

ROOT = Path(__file__).resolve().parents[2]


def spec_error(spec: str) -> AgentSpecError:
    with pytest.raises(AgentSpecError) as caught:
        resolve_agent(spec)
    return caught.value


def test_parse_splits_prefix_and_target() -> None:
    assert parse_agent_spec("py:pkg.mod:agent") == AgentSpec("py:pkg.mod:agent", "py:", "pkg.mod:agent")
    assert parse_agent_spec(" cmd:./agent --fast ") == AgentSpec("cmd:./agent --fast", "cmd:", "./agent --fast")


def test_every_connector_entry_is_a_lazy_module_attr_string() -> None:
    for prefix, entry in CONNECTORS.items():
        module, _, attr = entry.factory.partition(":")
        assert module.startswith("sredrill.agents.") and attr, prefix
        assert entry.form.startswith(prefix), prefix


def test_a_spec_error_is_an_input_error_about_the_agent_flag() -> None:
    error = spec_error("nope")
    assert isinstance(error, InputError)
    assert error.field == "--agent"


def test_an_unknown_spec_lists_the_forms_and_the_closest() -> None:
    error = spec_error("pyy:pkg.mod:agent")
    assert error.allowed == sorted(e.form for e in CONNECTORS.values())
    assert {"cmd:COMMAND", "py:MODULE:ATTR", "reference"} <= set(error.allowed)
    assert "did you mean 'py:pkg.mod:agent'?" in str(error)
    assert "allowed: " in str(error) and "py:MODULE:ATTR" in str(error)


def test_an_empty_spec_says_so() -> None:
    assert "the agent spec is empty" in str(spec_error("  "))


def test_a_python_target_without_prefix_suggests_py() -> None:
    assert "did you mean 'py:examples.agents.echo_agent:agent'?" in str(spec_error("examples.agents.echo_agent:agent"))


def test_a_command_without_prefix_suggests_cmd() -> None:
    assert "did you mean 'cmd:./my-agent --fast'?" in str(spec_error("./my-agent --fast"))


def test_py_without_module_attr() -> None:
    error = spec_error("py:examples.agents.echo_agent")
    assert "a py: spec needs MODULE:ATTR" in str(error)
    assert "py:examples.agents.echo_agent:agent" in str(error)


def test_py_module_not_importable_names_it_and_the_search_path() -> None:
    message = str(spec_error("py:no_such_agents_pkg.agent:run"))
    assert "cannot import module 'no_such_agents_pkg.agent'" in message
    assert "current directory" in message and "on sys.path" in message
    assert "no_such_agents_pkg/" in message


def test_py_module_whose_own_import_fails_shows_that_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_agent_mod.py").write_text("import not_installed_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    message = str(spec_error("py:broken_agent_mod:agent"))
    assert "importing module 'broken_agent_mod' failed" in message
    assert "not_installed_dependency_xyz" in message


def test_py_module_raising_at_import_is_a_spec_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "raising_agent_mod.py").write_text("raise RuntimeError('needs OPENAI_API_KEY')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "RuntimeError: needs OPENAI_API_KEY" in str(spec_error("py:raising_agent_mod:agent"))


def test_py_attribute_missing_suggests_the_closest() -> None:
    error = spec_error("py:tests.support.sample_agents:answr")
    assert "has no attribute 'answr'" in str(error)
    assert "did you mean 'answer'?" in str(error)
    assert error.allowed is not None and "answer" in error.allowed


def test_py_attribute_not_callable() -> None:
    assert "'not_callable' is not callable (it is a str)" in str(
        spec_error("py:tests.support.sample_agents:not_callable")
    )


def test_py_sync_function_is_rejected_at_resolve_time() -> None:
    message = str(spec_error("py:tests.support.sample_agents:sync_agent"))
    assert "is a regular function, not an async one" in message
    assert "async def sync_agent(task)" in message


def test_py_function_with_the_wrong_arguments() -> None:
    assert "must accept one argument, the Task" in str(spec_error("py:tests.support.sample_agents:two_arguments"))


def test_py_class_asks_for_an_instance() -> None:
    assert "is a class" in str(spec_error("py:tests.support.sample_agents:ObjectAgent"))


@pytest.mark.parametrize("spec", ["cmd:", "cmd:   "])
def test_cmd_empty_command(spec: str) -> None:
    assert "the command is empty" in str(spec_error(spec))


def test_cmd_unbalanced_quote() -> None:
    message = str(spec_error('cmd:python "my agent.py'))
    assert "cannot split the command: No closing quotation" in message


def test_cmd_executable_not_on_path() -> None:
    assert "command 'sredrill-no-such-agent' not found on PATH" in str(spec_error("cmd:sredrill-no-such-agent --x"))


def test_cmd_path_that_does_not_exist() -> None:
    assert "no such file: ./no/such/agent.sh" in str(spec_error("cmd:./no/such/agent.sh"))


def test_cmd_path_that_is_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("echo hi\n")
    message = str(spec_error(f"cmd:{script}"))
    assert "is not an executable file" in message and f"chmod +x {script}" in message


def test_valid_specs_resolve_to_agents_keeping_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for spec in (
        "py:examples.agents.echo_agent:agent",
        f"cmd:{shlex.quote(sys.executable)} examples/agents/script_agent.py",
    ):
        agent = resolve_agent(spec)
        assert isinstance(agent, Agent)
        assert agent.spec == spec
