"""Fixtures of the agent tests, from the shared `tests.support`."""

from tests.support.fixtures import openai_stub  # noqa: F401
