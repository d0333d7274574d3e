"""Transcripts: JSON-line steps parsed one line at a time, without a subprocess."""

from __future__ import annotations

import json

from sredrill.agents.transcript import Transcript
from sredrill.trajectory import AssistantStep, Recorder, ResponseStep, ToolCallStep, ToolResultStep


def feed(*lines: object) -> tuple[Transcript, Recorder]:
    recorder = Recorder()
    transcript = Transcript(recorder)
    for line in lines:
        transcript.feed(line if isinstance(line, str) else json.dumps(line))
    return transcript, recorder


def test_json_values_that_are_not_step_objects_are_text() -> None:
    transcript, recorder = feed("42", '"quoted"', "[1, 2]", {"no_kind": True})
    assert [s.kind for s in recorder.steps] == ["assistant"] * 4
    assert transcript.warnings == []


def test_blank_lines_are_kept_raw_but_make_no_step() -> None:
    transcript, recorder = feed("", "   ", "text")
    assert transcript.lines == ["", "   ", "text"]
    assert [s.kind for s in recorder.steps] == ["assistant"]


def test_a_tool_call_id_may_be_given_as_id_or_call_id_or_not_at_all() -> None:
    _, recorder = feed(
        {"kind": "tool_call", "name": "a", "id": "x1"},
        {"kind": "tool_call", "name": "b", "call_id": "x2"},
        {"kind": "tool_call", "name": "c"},
    )
    ids = [s.call_id for s in recorder.steps if isinstance(s, ToolCallStep)]
    assert ids[:2] == ["x1", "x2"] and ids[2] not in ids[:2]


def test_a_tool_result_names_its_tool_through_the_call_id() -> None:
    _, recorder = feed(
        {"kind": "tool_call", "name": "get_events", "id": "e1"}, {"kind": "tool_result", "call_id": "e1"}
    )
    result = recorder.steps[1]
    assert isinstance(result, ToolResultStep) and result.name == "get_events" and result.size_bytes is None


def test_a_tool_result_for_no_known_call_and_no_name_is_text_with_a_warning() -> None:
    transcript, recorder = feed({"kind": "tool_result", "call_id": "nope", "result": 1})
    assert isinstance(recorder.steps[0], AssistantStep)
    assert "needs `name` or the `call_id` of an earlier tool_call" in transcript.warnings[0]


def test_no_output_at_all_is_an_empty_answer_recorded_as_the_response() -> None:
    transcript, recorder = feed()
    reply = transcript.reply("")
    assert (reply.output, reply.diagnosis, reply.log) == ("", None, "")
    assert recorder.steps == [ResponseStep(content="", t_ms=recorder.steps[0].t_ms)]


def test_the_log_is_stderr_then_the_warnings() -> None:
    transcript, _ = feed({"kind": "thinking"})
    log = transcript.reply("agent log line\n").log
    assert log.splitlines()[0] == "agent log line"
    assert log.splitlines()[1].startswith("[sredrill] stdout line 1: invalid step, kept as text: content")
