"""docs/agent-protocol.md stays true to the code: its Task schema is generated, its step kinds complete.

Regenerate the schema after changing `Task`: `python tests/agents/test_agent_protocol_doc.py`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sredrill.agents import Task
from sredrill.agents.spec import CONNECTORS
from sredrill.agents.transcript import STEP_KINDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "agent-protocol.md"
START, END = "<!-- task-schema:start -->", "<!-- task-schema:end -->"


def task_wire_schema() -> str:
    """The Task's JSON Schema as sent to out-of-process agents: `env` is the process environment instead."""
    schema = Task.model_json_schema()
    del schema["properties"]["env"]
    return "```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```"


def render(doc: str) -> str:
    before, rest = doc.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{task_wire_schema()}\n{END}{after}"


def test_the_task_schema_in_the_doc_is_current() -> None:
    doc = DOC.read_text()
    assert doc == render(doc), "the Task schema changed: run `python tests/agents/test_agent_protocol_doc.py`"


def test_every_step_kind_and_connector_is_documented() -> None:
    doc = DOC.read_text()
    for kind in STEP_KINDS:
        assert re.search(rf"^\s*\| `{kind}` \|", doc, re.MULTILINE), kind
    for prefix in CONNECTORS:
        assert f"`{prefix}" in doc, prefix


if __name__ == "__main__":
    DOC.write_text(render(DOC.read_text()))
