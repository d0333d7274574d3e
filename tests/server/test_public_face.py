"""`sredrill.server`'s public face: `__all__` resolves, and importing it loads neither fastapi nor uvicorn."""

from __future__ import annotations

import subprocess
import sys

import sredrill.server


def test_all_is_unique_and_resolves() -> None:
    names = list(sredrill.server.__all__)
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(sredrill.server, name) is not None, name


def test_importing_the_package_is_light() -> None:
    code = (
        "import sys, sredrill.server; from sredrill.server import TraceCatalog, SessionStore, ServerThread;"
        "print([m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
