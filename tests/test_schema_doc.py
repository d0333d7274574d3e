"""docs/run-report.schema.json is the RunReport's JSON Schema, exactly as the model generates it.

After changing `sredrill.results`, regenerate it with:

    SREDRILL_UPDATE_SCHEMA=1 .tools/bin/uv run --frozen --no-sync pytest tests/test_schema_doc.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sredrill.results import RunReport

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "run-report.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def generated_schema() -> dict[str, object]:
    return {"$schema": DRAFT, **RunReport.model_json_schema()}


def test_the_run_report_schema_document_is_up_to_date() -> None:
    schema = generated_schema()
    if os.environ.get("SREDRILL_UPDATE_SCHEMA") == "1":
        SCHEMA_FILE.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert SCHEMA_FILE.is_file(), f"{SCHEMA_FILE} is missing; {__doc__}"
    stored = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert stored == schema, f"{SCHEMA_FILE.name} is out of date with sredrill.results.RunReport; {__doc__}"
