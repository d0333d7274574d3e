"""Agent replies: turning what an agent answered (a Diagnosis, a dict, text) into an `AgentReply`.

Every connector ends here, so a Diagnosis returned by a `py:` function, printed by a `cmd:` agent or
posted by a service becomes the same reply (DESIGN §4.1: `output` is text, `data` the JSON form).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import ValidationError

from sredrill.agents.protocol import AgentReply
from sredrill.diagnosis import Diagnosis, diagnosis_text, parse_diagnosis_text
from sredrill.errors import AgentError

__all__ = [
    "ACCEPTED_RETURN_TYPES",
    "reply_from_diagnosis",
    "reply_from_mapping",
    "reply_from_text",
    "reply_from_value",
    "validation_lines",
]

ACCEPTED_RETURN_TYPES = "a Diagnosis, a dict (a Diagnosis's fields, or any JSON object) or a str"


def validation_lines(exc: ValidationError) -> str:
    """One line per pydantic error, `location: message`, for messages users read."""
    return "\n".join(f"  {'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors())


def reply_from_diagnosis(diagnosis: Diagnosis) -> AgentReply:
    """A reply whose output is the Diagnosis as text and whose data is the Diagnosis as a dict."""
    return AgentReply(
        output=diagnosis_text(diagnosis),
        diagnosis=diagnosis,
        data=diagnosis.model_dump(mode="json"),
    )


def reply_from_mapping(value: Mapping[object, object]) -> AgentReply:
    """A reply from a dict: a Diagnosis when it has `root_cause`, else any JSON object.

    Raises:
        AgentError: the dict has `root_cause` but is not a valid Diagnosis, or it is not JSON.
    """
    if "root_cause" in value:
        try:
            diagnosis = Diagnosis.model_validate(value)
        except ValidationError as exc:
            # A dict with `root_cause` is meant as a Diagnosis; using it as plain data would hide the mistake
            # until grading reports "no diagnosis" with no reason given.
            raise AgentError(
                "the agent returned a dict with 'root_cause' that is not a valid Diagnosis:\n" + validation_lines(exc)
            ) from exc
        return reply_from_diagnosis(diagnosis)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise AgentError(f"the agent returned a dict that is not JSON: {exc}") from exc
    return AgentReply(output=text, data=json.loads(text))


def reply_from_text(text: str) -> AgentReply:
    """A reply from text: `data` when it is JSON, `diagnosis` when it parses as one.

    The text may be the original suite's `ROOT_CAUSE:` format or a Diagnosis as JSON; anything else is kept
    as plain output with no diagnosis (text is free-form, so it never raises).
    """
    diagnosis = parse_diagnosis_text(text)
    try:
        data = json.loads(text)
    except ValueError:
        return AgentReply(output=text, diagnosis=diagnosis)
    if diagnosis is None and isinstance(data, dict) and "root_cause" in data:
        try:
            diagnosis = Diagnosis.model_validate(data)
        except ValidationError:
            diagnosis = None
    return AgentReply(output=text, diagnosis=diagnosis, data=data)


def reply_from_value(value: object) -> AgentReply:
    """A reply from whatever a `py:` agent returned.

    Raises:
        AgentError: the value is none of the accepted types, or an invalid Diagnosis dict.
    """
    if isinstance(value, Diagnosis):
        return reply_from_diagnosis(value)
    if isinstance(value, Mapping):
        return reply_from_mapping(value)
    if isinstance(value, str):
        return reply_from_text(value)
    raise AgentError(
        f"the agent returned {type(value).__name__}, which sredrill cannot use; return {ACCEPTED_RETURN_TYPES}"
    )
