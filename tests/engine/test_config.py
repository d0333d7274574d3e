"""Configuration precedence: flags > environment > file; bad values are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine import load_settings
from sredrill.errors import ConfigError


def test_file_then_environment_then_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.sredrill]\nagent = "py:file:agent"\njobs = 2\ntimeout = 9\n')
    for var in ("SREDRILL_AGENT", "SREDRILL_JOBS", "SREDRILL_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    assert load_settings({}, root=tmp_path).agent == "py:file:agent"
    monkeypatch.setenv("SREDRILL_JOBS", "4")
    settings = load_settings({}, root=tmp_path)
    assert (settings.jobs, settings.timeout) == (4, 9.0)
    assert load_settings({"jobs": 8, "agent": None}, root=tmp_path).jobs == 8


def test_sredrill_toml_is_read_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SREDRILL_SKIP_JUDGE", raising=False)
    (tmp_path / "sredrill.toml").write_text("skip_judge = true\njudge-model = 'm'\n")
    settings = load_settings({}, root=tmp_path)
    assert settings.skip_judge is True and settings.judge_model == "m"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.sredrill]\njobz = 2\n", "unknown setting 'jobz'; did you mean 'jobs'"),
        ('[tool.sredrill]\njobs = "many"\n', "jobs must be int"),
        ("[tool.sredrill\n", "invalid TOML"),
    ],
)
def test_bad_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_settings({}, root=tmp_path)


def test_secrets_are_not_read_from_files(tmp_path: Path) -> None:
    (tmp_path / "sredrill.toml").write_text('api_key = "sk-secret"\n')
    with pytest.raises(ConfigError, match="unknown setting 'api_key'"):
        load_settings({}, root=tmp_path)


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        load_settings({"jobs": 0}, root=tmp_path)
