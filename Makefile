# Everything a fresh machine needs: Python >= 3.11, pip and make. A pinned uv lives in .tools/.
UV_VERSION := 0.13.9
PYTHON ?= python3
UV := .tools/bin/uv
RUN := $(UV) run --frozen --no-sync

.PHONY: setup run evals test lint typecheck fmt bench clean

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

setup: $(UV)
	$(UV) sync --frozen --all-extras --compile-bytecode --quiet

# The main job: the built-in packs against the reference agent, offline, both axes and the gap.
# Exit 1 ("some scenarios failed") is a result, not a failure of the job; 2, 3, 4 and 5 (nothing selected:
# nothing ran) fail it.
run: setup
	@$(RUN) sredrill run --axis2; \
	  code=$$?; if [ $$code -eq 0 ] || [ $$code -eq 1 ]; then exit 0; else exit $$code; fi

# The example evals of the test SDK against the toy example agent (exit codes as for `run`).
evals: setup
	@$(RUN) sredrill test evals/ --agent py:examples.agents.toy_rca_agent:agent; \
	  code=$$?; if [ $$code -eq 0 ] || [ $$code -eq 1 ]; then exit 0; else exit $$code; fi

lint: setup
	$(RUN) ruff check src tests benchmarks evals examples
	$(RUN) ruff format --check src tests benchmarks evals examples
	$(RUN) mypy

# mypy over src/ alone ([tool.mypy] in pyproject.toml: default mode everywhere, strict on the packages listed
# there); `make lint` runs it too.
typecheck: setup
	$(RUN) mypy

fmt: setup
	$(RUN) ruff format src tests benchmarks evals examples
	$(RUN) ruff check --fix src tests benchmarks evals examples

test: lint
	$(RUN) pytest

bench: setup
	$(RUN) python benchmarks/harness_overhead.py

clean:
	rm -rf .tools .venv .sredrill .mypy_cache
