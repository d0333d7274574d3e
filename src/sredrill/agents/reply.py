"""Agent replies: turning what an agent answered (a Diagnosis, a dict, text) into an `AgentReply`.

Every connector ends here, so a Diagnosis returned by a `py:` function, printed by a `cmd:` agent or
posted by a service becomes the same reply (DESIGN §4.1: `output` is text, `data` the JSON form). It is also
the edge where foreign text is made safe (DESIGN §11): lone surrogates are replaced (`sredrill.text`), JSON of
any depth is an error rather than a crash, and the output text is capped at `OUTPUT_LIMIT_BYTES`; each change
is said in the reply's `notes`, which become the test result's `notes`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Final, TypeVar

from pydantic import ValidationError

from sredrill.agents.protocol import AgentReply
from sredrill.diagnosis import Diagnosis, diagnosis_text, parse_diagnosis_text
from sredrill.errors import AgentError
from sredrill.text import REPLACED_NOTE, parse_json, scrub, scrub_json

__all__ = [
    "ACCEPTED_RETURN_TYPES",
    "LOG_LIMIT_BYTES",
    "OUTPUT_LIMIT_BYTES",
    "agent_log_of",
    "cap_log",
    "cap_text",
    "reply_from_diagnosis",
    "reply_from_mapping",
    "reply_from_text",
    "reply_from_value",
    "truncated_note",
    "validation_lines",
    "with_agent_log",
]

ACCEPTED_RETURN_TYPES = "a Diagnosis, a dict (a Diagnosis's fields, or any JSON object) or a str"
OUTPUT_LIMIT_BYTES: Final = 1 << 20
"""An agent's output (and its raw reply) is kept up to this many UTF-8 bytes: the head, then a marker."""
LOG_LIMIT_BYTES: Final = 64 << 10
"""A test result keeps the agent's log up to this many UTF-8 bytes: the tail, after a line saying so."""
_LOG_ATTR: Final = "__sredrill_agent_log__"
_E = TypeVar("_E", bound=BaseException)


def validation_lines(exc: ValidationError) -> str:
    """One line per pydantic error, `location: message`, for messages users read."""
    return "\n".join(f"  {'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors())


def truncated_note(what: str, total_bytes: int, limit_bytes: int = OUTPUT_LIMIT_BYTES) -> str:
    """The result note for text cut to its head, e.g. `truncated_note("the agent's stdout", 104857600)`."""
    return f"{what} was {total_bytes} bytes; only the first {limit_bytes} were kept (marked '… [truncated: N bytes]')"


def cap_text(text: str, limit_bytes: int = OUTPUT_LIMIT_BYTES) -> tuple[str, int]:
    """The head of `text` within `limit_bytes` UTF-8 bytes plus `… [truncated: N bytes]`, and N (0: unchanged).

    `text` must be scrubbed (no lone surrogates). The cut never splits a character.
    """
    if len(text) * 4 <= limit_bytes:  # no character is longer than 4 bytes: surely short enough
        return text, 0
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text, 0
    cut = limit_bytes
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: step back to the character's start
        cut -= 1
    dropped = len(data) - cut
    return data[:cut].decode("utf-8") + f"… [truncated: {dropped} bytes]", dropped


def cap_log(text: str, limit_bytes: int = LOG_LIMIT_BYTES) -> str:
    """The tail of an agent's log within `limit_bytes` UTF-8 bytes (a crash explains itself at the end).

    When cut, a first line says so. `text` must be scrubbed (no lone surrogates).
    """
    if len(text) * 4 <= limit_bytes:
        return text
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    cut = len(data) - limit_bytes
    while cut < len(data) and data[cut] & 0xC0 == 0x80:  # a continuation byte: start at a character
        cut += 1
    head = f"[sredrill] the log's first {cut} bytes were dropped; its last {len(data) - cut} are kept\n"
    return head + data[cut:].decode("utf-8")


def with_agent_log(error: _E, log: str) -> _E:
    """Attach what the agent logged before it failed (its stderr, sredrill's warnings) to its error; returns it.

    Any exception leaving a connector may carry it: an `AgentError`, or the `CancelledError` of a run stopped by
    its timeout. The engine reads it back (`agent_log_of`) into the test result's `agent_log`.
    """
    setattr(error, _LOG_ATTR, log)
    return error


def agent_log_of(exc: BaseException) -> str | None:
    """The log `with_agent_log` attached to `exc`; None when there is none."""
    log = getattr(exc, _LOG_ATTR, None)
    return log if isinstance(log, str) and log else None


def _noted(reply: AgentReply, *, replaced: bool, total_bytes: int | None) -> AgentReply:
    if replaced:
        reply.notes.append(REPLACED_NOTE)
    if total_bytes is not None:
        reply.notes.append(truncated_note("the agent's answer", total_bytes))
    return reply


def _capped_output(text: str) -> tuple[str, int | None]:
    """The output kept and, when it was cut, the size of the whole answer."""
    output, dropped = cap_text(text)
    return output, (len(text.encode("utf-8")) if dropped else None)


def reply_from_diagnosis(diagnosis: Diagnosis) -> AgentReply:
    """A reply whose output is the Diagnosis as text and whose data is the Diagnosis as a dict."""
    data, replaced = scrub_json(diagnosis.model_dump(mode="json"))
    if replaced:
        diagnosis = Diagnosis.model_validate(data)
    output, total = _capped_output(diagnosis_text(diagnosis))
    return _noted(AgentReply(output=output, diagnosis=diagnosis, data=data), replaced=replaced, total_bytes=total)


def reply_from_mapping(value: Mapping[object, object]) -> AgentReply:
    """A reply from a dict: a Diagnosis when it has `root_cause`, else any JSON object.

    Raises:
        AgentError: the dict has `root_cause` but is not a valid Diagnosis, or it is not JSON (a value JSON
            has no form for, or nested too deeply).
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        raise AgentError(
            "the agent returned a dict nested too deeply to use as JSON: return a flatter object"
        ) from None
    except (TypeError, ValueError) as exc:
        raise AgentError(f"the agent returned a dict that is not JSON: {exc}") from exc
    text, replaced = scrub(text)
    try:
        data, _ = parse_json(text)
    except ValueError as exc:  # nested deeper than the parser goes, though `json.dumps` managed it
        raise AgentError(f"the agent returned a dict that sredrill cannot read back as JSON: {exc}") from None
    if isinstance(data, dict) and "root_cause" in data:
        try:
            diagnosis = Diagnosis.model_validate(data)
        except ValidationError as exc:
            # A dict with `root_cause` is meant as a Diagnosis; using it as plain data would hide the mistake
            # until grading reports "no diagnosis" with no reason given.
            raise AgentError(
                "the agent returned a dict with 'root_cause' that is not a valid Diagnosis:\n" + validation_lines(exc)
            ) from exc
        return _noted(reply_from_diagnosis(diagnosis), replaced=replaced, total_bytes=None)
    output, total = _capped_output(text)
    return _noted(AgentReply(output=output, data=data), replaced=replaced, total_bytes=total)


def reply_from_text(text: str) -> AgentReply:
    """A reply from text: `data` when it is JSON, `diagnosis` when it parses as one.

    The text may be the original suite's `ROOT_CAUSE:` format or a Diagnosis as JSON; anything else is kept
    as plain output with no diagnosis (text is free-form, so it never raises: JSON too deep to parse is text).
    """
    text, replaced = scrub(text)
    output, total = _capped_output(text)
    # A cut answer is graded on what was kept, exactly what the result shows.
    diagnosis = parse_diagnosis_text(output)
    try:
        data, _ = parse_json(output)
    except ValueError:
        return _noted(AgentReply(output=output, diagnosis=diagnosis), replaced=replaced, total_bytes=total)
    if diagnosis is None and isinstance(data, dict) and "root_cause" in data:
        try:
            diagnosis = Diagnosis.model_validate(data)
        except ValidationError:
            diagnosis = None
    return _noted(AgentReply(output=output, diagnosis=diagnosis, data=data), replaced=replaced, total_bytes=total)


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


async def read_capped(chunks: AsyncIterator[bytes], limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a streamed body (`response.aiter_bytes()`), and whether that was all of it."""
    content = bytearray()
    async for chunk in chunks:
        content += chunk
        if len(content) > limit:
            return bytes(content[:limit]), False
    return bytes(content), True
