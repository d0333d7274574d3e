"""The web UI's routes: `/ui` (runs), `/ui/compare`, `/ui/runs/{id}`, `/ui/runs/{id}/tests/{test}`, `/ui/env`,
`/ui/env/sessions/{sid}`. Pages read the same store and live runs as the runs API.
"""

# No `from __future__ import annotations`: FastAPI reads the route functions' annotations at run time.

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from sredrill.engine.reporters import html_pages as pages
from sredrill.engine.reporters.tables import section_rates
from sredrill.errors import InputError, SredrillError
from sredrill.server.gate import TOKEN_COOKIE
from sredrill.server.live import RunLauncher
from sredrill.server.runs_api import Pricing, run_row, status_of
from sredrill.store import AmbiguousRun

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from sredrill.server.gate import RunsGate
    from sredrill.store import Store

__all__ = ["scenario_evidence", "ui_router"]


def scenario_evidence(
    pack_name: str | None, test_id: str, *, allowed: set[str] | None, folders: Mapping[str, str] | None = None
) -> str:
    """The evidence views of the scenario an RCA test ran on, or "" (not an RCA test, pack not served).

    Args:
        pack_name: the result's `file` (its pack).
        test_id: `pack/folder#axis`.
        allowed: pack names that may be read (None: any built-in or loadable pack, for the CLI).
        folders: pack name -> the folder it is loaded from, for the packs a server was given as folders
            (`--pack tests/fixtures/k8s_env` runs as pack `k8s_env`).
    """
    from sredrill.scenarios import load_pack

    source = (folders or {}).get(pack_name or "", pack_name)
    if not pack_name or not source or "/" not in test_id or (allowed is not None and source not in allowed):
        return ""
    folder = test_id.split("#", 1)[0].removeprefix(f"{pack_name}/")
    try:
        scenario = load_pack(source).scenario(folder)
    except SredrillError:
        return ""
    from sredrill.server.ui.evidence import evidence_html

    return evidence_html(scenario)


def ui_router(
    *, open_store: "Callable[[], Store]", launcher: RunLauncher, gate: "RunsGate", app: "FastAPI"
) -> "APIRouter":
    """The UI's routes over the server's store, live runs and environment catalog."""
    from fastapi import APIRouter, Depends, Request
    from fastapi.responses import HTMLResponse, RedirectResponse

    from sredrill.scenarios import builtin_pack_names

    router = APIRouter(prefix="/ui", dependencies=[Depends(gate.read)], include_in_schema=False)
    options = app.state.options
    pricing = Pricing(options.prices)
    served = sorted({*builtin_pack_names(), "incidents", *(options.packs or ())})
    # A pack given as a folder runs (and is stored) under the folder's name.
    folders = {Path(p).name: p for p in options.packs or () if p not in builtin_pack_names()}

    def html(text: str, status: int = 200) -> Any:
        return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})

    def missing(what: str) -> Any:
        return html(pages.not_found_page(what), 404)

    def resolve(ref: str, address: "Callable[[str], str]") -> Any:
        """The run id `ref` names, read as the runs API reads it (a full id, a unique prefix or `latest`, the runs
        going on here included); else the page that says why: 409 linking each run a prefix may mean (at
        `address(run_id)`), or 404 with the store's words (its did-you-mean)."""
        if launcher.get(ref) is not None:
            return ref
        try:
            return open_store().resolve_run(ref)
        except AmbiguousRun as exc:
            choices = [(run_id, address(run_id)) for run_id in exc.allowed or ()]
            return html(pages.ambiguous_run_page(exc.message, choices), 409)
        except InputError as exc:
            return missing(exc.message)

    def status(run_id: str, finished: bool) -> str:
        return status_of(launcher.get(run_id), finished)

    @router.get("")
    async def runs(request: Request) -> Any:
        token = request.query_params.get("token")
        if token:
            # The token given once in a link (checked by the gate already) becomes a cookie, then leaves the
            # address bar. HttpOnly: no script reads it; SameSite=Strict: no other site's request carries it.
            response = RedirectResponse("/ui", status_code=303)
            response.set_cookie(TOKEN_COOKIE, token, path="/", httponly=True, samesite="strict")
            return response
        records = await asyncio.to_thread(open_store().list_runs, 200)
        # The API's rows, so the list shows the numbers (and words) of `GET /api/runs` and of each run page.
        rows = [
            {**run_row(r, status(r.run_id, r.finished), prices=options.prices), "sections": section_rates(r.summary)}
            for r in records
        ]
        return html(pages.runs_page(rows, packs=served))

    @router.get("/compare")
    async def compare(a: str = "", b: str = "") -> Any:
        if not a or not b:
            return missing(f"pick two stored runs to compare (got {a!r} and {b!r})")
        run_a = resolve(a, lambda run_id: f"/ui/compare?{urlencode({'a': run_id, 'b': b})}")
        run_b = resolve(b, lambda run_id: f"/ui/compare?{urlencode({'a': a, 'b': run_id})}")
        for found in (run_a, run_b):
            if not isinstance(found, str):
                return found
        cmp = await asyncio.to_thread(open_store().compare, run_a, run_b)
        return html(pages.compare_page(pricing.comparison(cmp)))

    @router.get("/runs/{run_id}")
    async def run(run_id: str) -> Any:
        found = resolve(run_id, lambda full: f"/ui/runs/{quote(full)}")
        if not isinstance(found, str):
            return found
        report = await asyncio.to_thread(open_store().report, found)
        if report is None:
            return missing(f"no run {run_id!r}")
        record = open_store().get_run(found)
        finished = record is not None and record.finished
        return html(pages.run_page(pricing.report(report), status=status(found, finished)))

    @router.get("/runs/{run_id}/tests/{test_id:path}")
    async def result(run_id: str, test_id: str) -> Any:
        found = resolve(run_id, lambda full: f"/ui/runs/{quote(full)}/tests/{quote(test_id)}")
        if not isinstance(found, str):
            return found
        results = {r.id: r for r in await asyncio.to_thread(open_store().results, found)}
        if test_id not in results:
            return missing(f"no test {test_id!r} in run {found}")
        steps = await asyncio.to_thread(open_store().trajectory, found, test_id)
        chosen = pricing.result(results[test_id])
        evidence = await asyncio.to_thread(
            scenario_evidence, chosen.file, chosen.id, allowed=set(served), folders=folders
        )
        return html(pages.result_page(found, chosen, steps, evidence=evidence))

    @router.get("/env")
    async def env() -> Any:
        return html(pages.env_page([t.model_dump(mode="json") for t in app.state.catalog.tasks()]))

    @router.get("/env/sessions/{session_id}")
    async def session(session_id: str) -> Any:
        return html(pages.session_page(session_id))

    return router
