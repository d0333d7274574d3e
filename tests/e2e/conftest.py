"""End-to-end helpers: run `python -m sredrill` in a subprocess, in a temporary project folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Cli:
    code: int
    stdout: str
    stderr: str

    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def result(self, name: str) -> dict[str, Any]:
        matches = [r for r in self.report()["results"] if r["name"] == name]
        assert len(matches) == 1, f"{name!r} not in {[r['name'] for r in self.report()['results']]}"
        return matches[0]


class Project:
    """A throwaway project folder: write eval files and agents, run the CLI there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.db = root / "runs.db"

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_"))}
        env.update(extra or {})
        return env

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "sredrill", *args, "--db", str(self.db)],
            cwd=self.root, env=self.env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, *args: str, env: dict[str, str] | None = None, db: bool = True, timeout: float = 120) -> Cli:
        cmd = [sys.executable, "-m", "sredrill", *args]
        if db:
            cmd += ["--db", str(self.db)]
        proc = subprocess.run(cmd, cwd=self.root, env=self.env(env), capture_output=True, text=True, timeout=timeout)
        return Cli(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


# -- a real browser (Debian's Chromium driven by Playwright), shared by the UI tests --------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
REQUIRED = os.environ.get("SREDRILL_REQUIRE_BROWSER") == "1"


def _missing_browser() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (uv sync --all-extras)"
    if not Path(CHROMIUM).exists():
        return "Chromium is not installed: apt-get update && apt-get install -y chromium"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing_browser()
    if missing is not None:
        if REQUIRED:
            pytest.fail(f"SREDRILL_REQUIRE_BROWSER=1 but {missing}")
        message = f"BROWSER TESTS SKIPPED: {missing} (set SREDRILL_REQUIRE_BROWSER=1 to make this a failure)"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
