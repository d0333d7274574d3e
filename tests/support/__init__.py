"""Test support shared by every test folder: real stand-ins (servers, agents), never mocks of our layers.

- `openai_server`: `OpenAIStub`, a local OpenAI-compatible server with scripted replies.
- `fixtures`: plain pytest fixtures to import into a `conftest.py` (`from tests.support.fixtures import …`).
- `sample_agents`: small `py:` agents and `sample_agent_cmd.py`, a `cmd:` agent, for connector tests.
"""
