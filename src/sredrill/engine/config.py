"""Configuration: `[tool.sredrill]` in pyproject.toml or sredrill.toml, then environment, then flags.

Precedence is CLI > environment > file (DESIGN §7); the CLI passes its flags and gets the merged values.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from sredrill.errors import ConfigError, InputError, did_you_mean

__all__ = ["DEFAULT_DB", "Settings", "check_timeout", "db_path", "load_settings"]

DEFAULT_DB = ".sredrill/sredrill.db"


@dataclass(frozen=True, slots=True)
class Settings:
    agent: str | None = None
    jobs: int = 1
    timeout: float | None = None
    db: str = DEFAULT_DB
    reporter: str | tuple[str, ...] = "console"
    """`--reporter`: one reporter, or several (`NAME` or `NAME=PATH` each; `engine.reporters.fanout`)."""
    base_url: str | None = None
    api_key: str | None = None
    judge_base_url: str | None = None
    judge_model: str | None = None
    judge_api_key: str | None = None
    skip_judge: bool = False
    prices: str | None = None
    """A prices file (TOML or JSON) that prices each run's tokens (`sredrill.engine.prices`)."""


_ENV = {
    "agent": "SREDRILL_AGENT",
    "jobs": "SREDRILL_JOBS",
    "timeout": "SREDRILL_TIMEOUT",
    "db": "SREDRILL_DB",
    "base_url": "OPENAI_BASE_URL",
    "api_key": "OPENAI_API_KEY",
    "judge_base_url": "SREDRILL_JUDGE_BASE_URL",
    "judge_model": "SREDRILL_JUDGE_MODEL",
    "judge_api_key": "SREDRILL_JUDGE_API_KEY",
    "skip_judge": "SREDRILL_SKIP_JUDGE",
    "prices": "SREDRILL_PRICES",
}
_FILE_KEYS = {f.name for f in fields(Settings)} - {"api_key", "judge_api_key"}  # secrets stay out of files


def _coerce(name: str, value: Any, source: str) -> Any:
    if name == "reporter" and isinstance(value, list):  # several reporters: reporter = ["console", "junit=…"]
        if not all(isinstance(v, str) for v in value):
            raise ConfigError(f"reporter must be a string or a list of strings, got {value!r}", path=source)
        return tuple(value)
    kind = {"jobs": int, "timeout": float, "skip_judge": bool}.get(name, str)
    try:
        if kind is bool and isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        return kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name} must be {kind.__name__}, got {value!r}", path=source) from exc


def _file_values(root: Path) -> tuple[dict[str, Any], str | None]:
    for name, table in (("sredrill.toml", None), ("pyproject.toml", ("tool", "sredrill"))):
        path = root / name
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML: {exc}", path=name) from exc
        for key in table or ():
            data = data.get(key, {})
        if data:
            return data, name
    return {}, None


def db_path(flag: str | None, *, root: Path | None = None) -> str | None:
    """The store a command uses, as `load_settings` merges `db`: `--db`, else `SREDRILL_DB`, else `db` in the
    config file; None when none is set (the caller's default: `DEFAULT_DB`, or no store for `sredrill audit`).

    Only `db` is read, so a command that needs no other setting is not stopped by an unrelated bad one.

    Raises:
        ConfigError: the config file is not valid TOML.
    """
    if flag:
        return flag
    if os.environ.get(_ENV["db"]):
        return os.environ[_ENV["db"]]
    values, source = _file_values(root or Path.cwd())
    value = values.get("db")
    return None if value is None else _coerce("db", value, source or "")


def check_timeout(value: float | None, name: str) -> None:
    """A timeout is None (each test's own) or a positive, finite number of seconds.

    Zero is refused rather than read as "no timeout" (pytest-timeout's reading): a test without a deadline
    can hang a run forever, and an agent that must answer in 0 s is a typo.

    Raises:
        InputError: naming `name` (the flag or variable) and the value.
    """
    if value is None:
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        raise InputError(
            f"{name} must be a positive, finite number of seconds, got {value!r}",
            hint="e.g. --timeout 300; leave it out to keep each test's own timeout (120 s by default)",
        )


def load_settings(flags: dict[str, Any], *, root: Path | None = None) -> Settings:
    """Merge file, environment and flags (None = not given) into Settings."""
    values, source = _file_values(root or Path.cwd())
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}  # where each value came from, for the error that names it
    for key, value in values.items():
        key = key.replace("-", "_")
        if key not in _FILE_KEYS:
            hint = did_you_mean(key, _FILE_KEYS)
            raise ConfigError(
                f"unknown setting {key!r}" + (f"; {hint}" if hint else ""), path=source, allowed=_FILE_KEYS
            )
        merged[key] = _coerce(key, value, source or "")
        origin[key] = f"{key} in {source}"
    for key, var in _ENV.items():
        if os.environ.get(var):
            merged[key] = _coerce(key, os.environ[var], f"${var}")
            origin[key] = f"${var}"
    for key, value in flags.items():
        if value is not None:
            merged[key] = value
            origin[key] = "--" + key.replace("_", "-")
    settings = replace(Settings(), **merged)
    if isinstance(settings.jobs, bool) or not isinstance(settings.jobs, int) or settings.jobs < 1:
        raise ConfigError(f"{origin.get('jobs', 'jobs')} must be at least 1, got {settings.jobs!r}")
    try:
        check_timeout(settings.timeout, origin.get("timeout", "timeout"))
    except InputError as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None
    return settings
