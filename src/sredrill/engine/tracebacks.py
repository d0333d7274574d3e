"""Tracebacks users read: the user's frames of an error, trimmed as pytest trims, and plain `assert` failures.

A test's error is shown with the frames of the user's code (eval files, hooks, fixtures, `py:` agents), each
`path:line in function` and its source line, then `Type: message`; sredrill's own frames, asyncio's and
installed packages' are left out (the innermost frame stays when it is a library's: that is where it broke).
Chained exceptions are shown cause first, as Python prints them; an agent worker's exception arrives as an
`ExceptionTrace` attached to the driver's `AgentError` and is shown as its cause. Bounded: deep recursions
keep their head and tail, and the text is cut to `TRACEBACK_LIMIT_CHARS`.

A failed plain `assert` becomes a failed check, like pytest's: its source line, and the values of the names in
it read from the failing frame (`assert total == 4` / `where total = 3`). Only names, attributes and constant
subscripts of plain containers are read, statically: no call in the expression is executed, no property runs.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import linecache
import os
import reprlib
import sysconfig
import types
from dataclasses import dataclass
from typing import Any, Final

from sredrill.harness import is_sredrill_file, shown_path
from sredrill.workers import ExceptionTrace, TraceFrame, attached_trace

__all__ = [
    "TRACEBACK_LIMIT_CHARS",
    "AssertFailure",
    "assert_failure",
    "format_stopped",
    "format_trace",
    "format_traceback",
    "is_user_file",
]

TRACEBACK_LIMIT_CHARS: Final = 16 * 1024
"""A formatted traceback is kept up to this many characters: the end, where the error is."""
_SOURCE_CHARS: Final = 200
_VALUES_SHOWN: Final = 12

_ASYNCIO_DIR: Final = os.path.dirname(asyncio.__file__) + os.sep
_LIBRARY_DIRS: Final = tuple(
    {os.path.join(p, "") for key in ("stdlib", "platstdlib", "purelib", "platlib") if (p := sysconfig.get_path(key))}
)

_repr = reprlib.Repr()
_repr.maxstring = 160
_repr.maxother = 160
_repr.maxlevel = 3
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 10


def is_user_file(path: str) -> bool:
    """True for the user's code: not sredrill's own, not the standard library's, not an installed package's."""
    if path.startswith("<frozen") or is_sredrill_file(path):
        return False
    return not path.startswith(_LIBRARY_DIRS) and "site-packages" not in path and "dist-packages" not in path


def _clip(text: str, limit: int = _SOURCE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kept(frames: list[TraceFrame]) -> list[TraceFrame]:
    kept = [f for f in frames if is_user_file(f.path)]
    last = frames[-1] if frames else None
    # A library raised (not sredrill, not asyncio's machinery): its line says what broke.
    if last is not None and not is_user_file(last.path) and not _is_machinery(last.path):
        kept.append(last)
    return kept


def _is_machinery(path: str) -> bool:
    return is_sredrill_file(path) or path.startswith(_ASYNCIO_DIR)


def _has_user_frames(trace: ExceptionTrace) -> bool:
    links = [trace.cause, trace.context, *trace.exceptions]
    return any(is_user_file(f.path) for f in trace.frames) or any(
        link is not None and _has_user_frames(link) for link in links
    )


def _frames_text(trace: ExceptionTrace) -> list[str]:
    lines = [f"… {trace.omitted} frames left out of the middle (a deep recursion) …"] if trace.omitted else []
    for frame in _kept(trace.frames):
        lines.append(f"{shown_path(frame.path)}:{frame.line} in {frame.function}")
        if frame.source:
            lines.append(f"    {_clip(frame.source)}")
    return lines


def _headline(trace: ExceptionTrace) -> str:
    return f"{trace.type_name}: {trace.message}" if trace.message else trace.type_name


def _lines(trace: ExceptionTrace, final: str | None) -> list[str]:
    lines: list[str] = []
    if trace.cause is not None:
        lines += [*_lines(trace.cause, None), "", "The above exception was the direct cause of the following:", ""]
    elif trace.context is not None:
        lines += [*_lines(trace.context, None), "", "During handling of the above exception, another occurred:", ""]
    lines += _frames_text(trace)
    lines.append(final if final is not None else _headline(trace))
    if trace.exceptions:  # its message already says how many (`… (2 sub-exceptions)`)
        for n, member in enumerate(trace.exceptions, 1):
            lines.append(f"  [{n}]")
            lines += [f"    {line}" if line else "" for line in _lines(member, None)]
    return lines


def format_trace(trace: ExceptionTrace, *, final: str | None = None) -> str | None:
    """The trace as users read it, or None when no frame of it is the user's (nothing to show but the message).

    Args:
        trace: the exception's trace (`ExceptionTrace.of(exc)`, or one from a worker).
        final: the last line in place of `Type: message` (a timeout says what stopped the test).
    """
    if not _has_user_frames(trace):
        return None
    text = "\n".join(_lines(trace, final))
    if len(text) > TRACEBACK_LIMIT_CHARS:
        text = "[sredrill] traceback cut: its end is kept\n" + text[-TRACEBACK_LIMIT_CHARS:]
    return text


def format_traceback(exc: BaseException) -> str | None:
    """`exc`'s traceback, trimmed to the user's frames; None when none of its frames is the user's."""
    return format_trace(ExceptionTrace.of(exc))


def format_stopped(exc: BaseException, reason: str) -> str | None:
    """Where a timeout stopped the test: the frames the cancellation went through, ending with `reason`.

    Args:
        exc: the `TimeoutError` of the test's deadline; the cancellation it turned into is its cause or context.
        reason: the last line, e.g. "timed out after 5s in the test body".
    """
    stopped = exc.__cause__ or exc.__context__
    while stopped is not None and not isinstance(stopped, asyncio.CancelledError):
        stopped = stopped.__cause__ or stopped.__context__
    if stopped is None:
        return None
    trace = ExceptionTrace.of(stopped)
    frames = list(trace.frames)
    if (remote := attached_trace(stopped)) is not None:
        frames += remote.frames  # where the agent worker was when its call was cancelled (`Worker.call`)
    trace = trace.model_copy(update={"frames": frames, "cause": None, "context": None})
    return format_trace(trace, final=f"stopped here: {reason}")


# -- plain asserts --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssertFailure:
    """A failed `assert` (or a raised AssertionError) in the user's code, for its check signal."""

    where: str
    """`path:line: source`."""
    message: str
    """`assert total == 4` and a `where NAME = value` line per name; the assert's own message first."""


def _innermost_user_frame(exc: BaseException) -> tuple[types.FrameType, int] | None:
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _statement_at(source: str, lineno: int) -> ast.stmt | None:
    """The innermost statement spanning `lineno`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    spanning = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno)
    ]
    # ast.walk goes outer to inner: among equally short spans the last is the innermost.
    return min(reversed(spanning), key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)


class _Unknown:
    """A value that cannot be read without running code."""


_UNKNOWN: Final = _Unknown()


def _static_attribute(value: object, name: str) -> object:
    try:
        found = inspect.getattr_static(value, name)
    except AttributeError:
        return _UNKNOWN
    if isinstance(found, types.MemberDescriptorType):  # a __slots__ field: read without running user code
        try:
            return found.__get__(value, type(value))
        except AttributeError:
            return _UNKNOWN
    if hasattr(type(found), "__get__"):  # a property, a method or another descriptor: reading it runs code
        return _UNKNOWN
    return found


def _read(node: ast.expr, frame: types.FrameType) -> object:
    """The value of a name, attribute or constant subscript, from the frame; `_UNKNOWN` when it needs code run."""
    if isinstance(node, ast.Name):
        if node.id in frame.f_locals:
            return frame.f_locals[node.id]
        if node.id in frame.f_globals:
            return frame.f_globals[node.id]
        return _UNKNOWN  # a builtin: nothing to show
    if isinstance(node, ast.Attribute):
        base = _read(node.value, frame)
        return _UNKNOWN if base is _UNKNOWN else _static_attribute(base, node.attr)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = _read(node.value, frame)
        if type(base) in (dict, list, tuple):
            try:
                return base[node.slice.value]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return _UNKNOWN
    return _UNKNOWN


def _is_shown(value: object) -> bool:
    if value is _UNKNOWN or isinstance(value, types.ModuleType | type):
        return False
    return not callable(value)


def _safe_repr(value: object) -> str:
    try:
        return _repr.repr(value)
    except Exception:  # the user's __repr__ failed: say what it is
        return f"<{type(value).__name__} object (its repr failed)>"


def _values(node: ast.expr, frame: types.FrameType, segment: Any, out: dict[str, str]) -> None:
    """Each name, attribute chain or constant subscript in `node` that holds a plain value, outermost first."""
    if len(out) >= _VALUES_SHOWN:
        return
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        value = _read(node, frame)
        if _is_shown(value):
            text = segment(node)
            if text and text not in out:
                out[text] = _safe_repr(value)
            return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            _values(child, frame, segment, out)


def _one_line(text: str) -> str:
    return _clip(" ".join(text.split()))


def assert_failure(exc: AssertionError) -> AssertFailure | None:
    """The failed assert's source and the values of its names; None when no frame of it is the user's."""
    found = _innermost_user_frame(exc)
    if found is None:
        return None
    frame, lineno = found
    path = frame.f_code.co_filename
    shown = shown_path(path)
    source = "".join(linecache.getlines(path, frame.f_globals))
    statement = _statement_at(source, lineno) if source else None
    own = _message_text(exc)
    if not isinstance(statement, ast.Assert):
        line = linecache.getline(path, lineno).strip()
        head = f"AssertionError: {own}" if own else "AssertionError"
        return AssertFailure(where=f"{shown}:{lineno}: {_clip(line)}" if line else f"{shown}:{lineno}", message=head)
    text = ast.get_source_segment(source, statement) or f"assert {ast.unparse(statement.test)}"
    test = ast.get_source_segment(source, statement.test) or ast.unparse(statement.test)
    values: dict[str, str] = {}
    _values(statement.test, frame, lambda n: ast.get_source_segment(source, n), values)
    message = f"assert {_one_line(test)}"
    if own:
        message = f"{own}: {message}"
    message += "".join(f"\n  where {name} = {value}" for name, value in values.items())
    return AssertFailure(where=f"{shown}:{statement.lineno}: {_one_line(text)}", message=message)


def _message_text(exc: BaseException) -> str:
    try:
        return _clip(str(exc), 2000)
    except Exception:  # a message object whose __str__ raises
        return ""
