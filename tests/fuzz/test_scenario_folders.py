"""Fuzzing the loader and lint with mutated copies of a built-in scenario folder (issue: hardening 1, 6, 8).

Each example copies `rds_postgres/002-connection-exhaustion` and applies a few mutations: drop, duplicate or
garble a file, set a value anywhere to NaN, infinity, a huge or negative number, a lone surrogate, a wrong
type or a deeply nested value, shuffle a series' timestamps. Whatever the folder holds: `load_pack` returns
a pack or raises `InputError` (never another exception), lint never raises and every finding names a file
of the pack, no error is the "likely a bug" fallback, and everything prints as UTF-8.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sredrill.errors import InputError
from sredrill.scenarios import blind_alert, lint_pack, load_pack
from sredrill.scenarios.loader import BUILTIN_PACKS_DIR

SOURCE = BUILTIN_PACKS_DIR / "rds_postgres" / "002-connection-exhaustion"
FILES = sorted(p.name for p in SOURCE.iterdir())
FOLDER = "002-connection-exhaustion"

HOSTILE_VALUES = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e308, -1.0, -(10**30), 0, 10**400, True, None]),
    st.sampled_from(["\ud800", "ok\udfffok", "", "NaN", "inf", "2026-05-04T14:00:00", "x" * 10_000, "001-"]),
    st.sampled_from([[], {}, [[[[[]]]]], {"a": {"b": {"c": []}}}, ["x", 1, None], {"\ud801": 1}]),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.integers(50, 200).map(lambda depth: _nest(depth)),
)


def _nest(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _locations(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_locations(item, (*at, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value[:30]):  # a series' first points stand for the rest
            out.extend(_locations(item, (*at, i)))
    return out


def _set(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = value
    return doc


def _read(path: Path) -> Any:
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _write(path: Path, doc: Any) -> None:
    if path.suffix == ".json":
        path.write_text(json.dumps(doc))  # ensure_ascii: a surrogate becomes its \ud800 escape, NaN its literal
    else:
        try:
            path.write_text(yaml.safe_dump(doc, allow_unicode=False))
        except (yaml.YAMLError, UnicodeError, ValueError):
            path.write_text(json.dumps(doc))  # JSON is YAML too


MUTATION = st.sampled_from(["drop", "duplicate", "garble", "truncate", "value", "shuffle", "key"])


@settings(settings.get_profile("fuzz"))
@given(data=st.data(), mutations=st.lists(st.tuples(MUTATION, st.sampled_from(FILES)), min_size=1, max_size=4))
def test_mutated_scenario_folders_load_or_fail_cleanly(data: st.DataObject, mutations: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pack_dir = Path(tmp) / "fuzzpack"
        folder = pack_dir / FOLDER
        shutil.copytree(SOURCE, folder)
        shutil.copytree(SOURCE, pack_dir / "001-untouched")
        for kind, name in mutations:
            path = folder / name
            if not path.is_file():
                continue
            if kind == "drop":
                path.unlink()
            elif kind == "duplicate":
                target = data.draw(
                    st.sampled_from(
                        ["aws_cloudwatch_metrics_Extra.json", "aws_cloudwatch_metrics_envelope.json", *FILES]
                    )
                )
                if target != name:
                    shutil.copy(path, folder / target)
            elif kind in ("garble", "truncate"):
                raw = bytearray(path.read_bytes())
                if kind == "truncate":
                    raw = raw[: data.draw(st.integers(0, len(raw)))]
                else:
                    for _ in range(data.draw(st.integers(1, 8))):
                        if raw:
                            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
                path.write_bytes(bytes(raw))
            else:
                try:
                    doc = _read(path)
                except (ValueError, yaml.YAMLError, UnicodeError):
                    continue
                if kind == "shuffle":
                    series = doc.get("metric_data_results") if isinstance(doc, dict) else None
                    if series and isinstance(series[0], dict) and isinstance(series[0].get("timestamps"), list):
                        series[0]["timestamps"] = data.draw(st.permutations(series[0]["timestamps"]))
                elif kind == "key" and isinstance(doc, dict) and doc:
                    key = data.draw(st.sampled_from(sorted(doc, key=str)))
                    doc[data.draw(st.sampled_from(["\ud800", key.upper() if isinstance(key, str) else "k", "x"]))] = (
                        doc.pop(key)
                    )
                else:
                    at = data.draw(st.sampled_from(_locations(doc)))
                    doc = _set(doc, at, data.draw(HOSTILE_VALUES))
                _write(path, doc)

        try:
            pack = load_pack(pack_dir)
        except InputError as exc:
            assert exc.render().encode("utf-8")
            return
        findings = lint_pack(pack)
        for finding in findings:
            assert finding.path.startswith("fuzzpack/") and "." in finding.path.rsplit("/", 1)[-1], finding
            assert "likely a bug" not in finding.fix, finding.render()
            assert finding.render().encode("utf-8")
        assert {s.folder for s in pack.scenarios} | set(pack.broken) == {"001-untouched", FOLDER}
        for scenario in pack.scenarios:
            json.dumps(blind_alert(scenario, pack.vocabulary).to_payload()).encode("utf-8")
