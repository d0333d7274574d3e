"""Fixtures of the server tests: real uvicorn servers on free loopback ports (not only ASGI test clients)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from sredrill.server import ServerThread, create_app
from tests.support.fixtures import openai_stub  # noqa: F401

ServerFactory = Callable[..., contextlib.AbstractContextManager[ServerThread]]


@contextlib.contextmanager
def running(**options: Any) -> Iterator[ServerThread]:
    """`create_app(**options)` (incident tasks only unless `packs` says otherwise) served on a free port."""
    options.setdefault("packs", ())
    with ServerThread(create_app(**options)) as server:
        yield server


def runs_auth(server: ServerThread) -> dict[str, str]:
    """The header carrying a server's runs API and UI token (given as `token=`, or generated at start)."""
    token = server.app.state.options.runs_token
    assert token is not None, "this server's runs API is closed (bound beyond loopback without a token)"
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def serve() -> ServerFactory:
    """Start a server with the given `create_app` options: `with serve(max_sessions=2) as server: …`."""
    return running


@pytest.fixture(scope="module")
def shared() -> Iterator[ServerThread]:
    """One server for tests that only read (health, metadata, schema, …) or use sessions of their own."""
    with running() as server:
        yield server


@pytest.fixture
def server() -> Iterator[ServerThread]:
    """A fresh server: its default session and capacity are this test's alone."""
    with running() as server:
        yield server


@pytest.fixture
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        yield http
