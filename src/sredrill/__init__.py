"""sredrill: fire drills for AI SRE agents.

`import sredrill` loads only the authoring surface; everything else loads when first used.

Examples:
    >>> from sredrill import test, expect
    >>> @test("finds the cause", prompt="Why is the database slow?")
    ... async def _(agent):
    ...     result = await agent.run()
    ...     expect(result.output).to_contain("database")
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Diagnosis",
    "RunResult",
    "Verdict",
    "after_all",
    "after_each",
    "before_all",
    "before_each",
    "describe",
    "evaluator",
    "expect",
    "judge",
    "run",
    "scenario",
    "test",
]

# name -> module that defines it; resolved on first access (STYLE #3).
_LAZY = {
    "Diagnosis": "sredrill.diagnosis",
    "Verdict": "sredrill.results",
    "RunResult": "sredrill.sdk",
    "after_all": "sredrill.sdk",
    "after_each": "sredrill.sdk",
    "before_all": "sredrill.sdk",
    "before_each": "sredrill.sdk",
    "describe": "sredrill.sdk",
    "evaluator": "sredrill.sdk",
    "expect": "sredrill.sdk",
    "judge": "sredrill.sdk",
    "scenario": "sredrill.sdk",
    "test": "sredrill.sdk",
    "run": "sredrill.engine",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sredrill' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
