"""Plain pytest fixtures; a `conftest.py` imports the ones it needs.

Examples:
    >>> # tests/conftest.py
    >>> from tests.support.fixtures import openai_stub  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIStub

__all__ = ["openai_stub"]


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A started `OpenAIStub` with an empty script; `push(...)` replies, read `requests` afterwards."""
    with OpenAIStub() as stub:
        yield stub
