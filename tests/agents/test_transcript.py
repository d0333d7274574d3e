"""Transcripts: JSON-line steps parsed one line at a time, without a subprocess."""

from __future__ import annotations

import json

from sredrill.agents.transcript import Transcript
from sredrill.text import REPLACED_NOTE
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


def test_a_lone_surrogate_anywhere_in_a_line_is_replaced_and_noted() -> None:
    transcript, recorder = feed(
        '{"kind": "thinking", "content": "lag \\ud800 grows"}',
        '{"kind": "tool_call", "name": "q", "args": {"k\\udfff": ["\\ud800"]}, "call_id": "c1"}',
        '{"kind": "tool_result", "call_id": "c1", "result": {"deep": [[{"x": "\\udbff"}]]}}',
        "plain text \ud800 printed raw",
    )
    thinking, call, result, text = recorder.steps
    assert thinking.content == "lag \ufffd grows"  # type: ignore[union-attr]
    assert call.args == {"k\ufffd": ["\ufffd"]}  # type: ignore[union-attr]
    assert result.result == {"deep": [[{"x": "\ufffd"}]]}  # type: ignore[union-attr]
    assert text.content == "plain text \ufffd printed raw"  # type: ignore[union-attr]
    # Everything recorded can now be encoded, so the store, JSON output and HTTP replies accept it.
    json.dumps([s.model_dump(mode="json") for s in recorder.steps], ensure_ascii=False).encode()
    "\n".join(transcript.lines).encode()
    assert recorder.notes == [REPLACED_NOTE]  # once, however many lines had one
    assert transcript.warnings == []


def test_clean_lines_leave_no_note() -> None:
    _, recorder = feed({"kind": "thinking", "content": "fine ü 漢字 😀"})
    assert recorder.notes == []


def test_json_nested_too_deeply_to_parse_is_text_with_a_warning() -> None:
    line = '{"kind": "tool_call", "name": "q", "args": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    transcript, recorder = feed(line, {"kind": "response", "content": "done"})
    assert [s.kind for s in recorder.steps] == ["assistant", "response"]
    (warning,) = transcript.warnings
    assert warning.startswith("stdout line 1: not read as a step, kept as text: JSON nested too deeply")
    assert transcript.reply("").output == "done"


def test_a_step_nested_deeper_than_validation_allows_is_text_with_a_short_warning() -> None:
    line = '{"kind": "tool_result", "name": "q", "result": ' + "[" * 400 + "]" * 400 + "}"
    transcript, recorder = feed(line)
    assert [s.kind for s in recorder.steps] == ["assistant"]
    (warning,) = transcript.warnings
    assert warning.startswith("stdout line 1: invalid step, kept as text: result.")
    assert len(warning) < 200


def test_reported_tool_steps_are_unverified() -> None:
    _, recorder = feed(
        {"kind": "tool_call", "name": "q", "call_id": "c1"}, {"kind": "tool_result", "call_id": "c1", "result": 1}
    )
    assert [s.verified for s in recorder.steps] == [False, False]  # type: ignore[union-attr]


# -- a rejected answer line is said, not silently dropped -------------------------------------------------------


def test_a_rejected_diagnosis_line_is_named_with_its_line_and_reason() -> None:
    transcript, _ = feed(
        {"kind": "thinking", "content": "cpu"},
        "plain text",
        {"kind": "diagnosis", "root_cause": "a runaway query", "foo": 1},
    )
    reply = transcript.reply("")
    assert reply.diagnosis is None
    assert reply.rejected_answer == (
        "the agent's diagnosis line 3 was rejected: foo: Extra inputs are not permitted (unknown key 'foo'; "
        "a diagnosis line has: kind, root_cause, category, failure_modes, causal_chain, claims, ruled_out, "
        "location, report); see the agent log"
    )
    assert reply.rejected_answer in reply.notes
    assert "[sredrill] stdout line 3: invalid step, kept as text: foo: Extra inputs" in reply.log


def test_a_nested_diagnosis_keeps_its_location_and_a_wrong_type_says_so() -> None:
    transcript, _ = feed({"kind": "diagnosis", "diagnosis": {"root_cause": "x", "category": "cpu"}})
    rejected = transcript.reply("").rejected_answer
    assert rejected is not None
    assert rejected.startswith("the agent's diagnosis line 1 was rejected: diagnosis.category: Input should be")
    transcript, _ = feed({"kind": "diagnosis", "root_cause": "x", "claims": [{"text": "t", "bogus": 1}]})
    rejected = transcript.reply("").rejected_answer
    assert rejected is not None and "claims.0.bogus: Extra inputs are not permitted (unknown key 'bogus')" in rejected


def test_a_later_valid_diagnosis_answers_and_nothing_is_rejected() -> None:
    transcript, _ = feed(
        {"kind": "diagnosis", "root_cause": "x", "foo": 1}, {"kind": "diagnosis", "root_cause": "a runaway query"}
    )
    reply = transcript.reply("")
    assert reply.diagnosis is not None and reply.rejected_answer is None
    assert not any("rejected" in n for n in reply.notes)
    assert "stdout line 1: invalid step" in reply.log  # the warning stays in the log


def test_a_rejected_response_line_is_named_unless_a_valid_one_follows() -> None:
    transcript, _ = feed({"kind": "response", "contents": "done"})
    rejected = transcript.reply("").rejected_answer
    assert rejected is not None and rejected.startswith("the agent's response line 1 was rejected: content: Field")
    transcript, _ = feed({"kind": "response", "contents": "done"}, {"kind": "response", "content": "done"})
    assert transcript.reply("").rejected_answer is None


def test_an_unknown_key_on_another_step_lists_that_steps_keys_and_rejects_no_answer() -> None:
    transcript, _ = feed({"kind": "thinking", "content": "x", "mood": "calm"})
    (warning,) = transcript.warnings
    assert warning.endswith(
        "mood: Extra inputs are not permitted (unknown key 'mood'; a thinking line has: kind, content)"
    )
    assert transcript.reply("").rejected_answer is None


def test_the_log_is_capped_to_its_tail() -> None:
    from sredrill.agents.reply import cap_log

    assert cap_log("short") == "short"
    text = "é" * 50_000 + "the crash"
    capped = cap_log(text, limit_bytes=1000)
    head, tail = capped.split("\n", 1)
    assert head.startswith("[sredrill] the log's first ") and tail.endswith("the crash")
    assert len(tail.encode()) <= 1000
