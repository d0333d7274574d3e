"""`/docs` without a network: Swagger UI's script and style from the `swagger-ui-py` package (Swagger UI 5: it
reads OpenAPI 3.1; the `server` extra), not FastAPI's default CDN; and the favicon every page links
(`/favicon.svg`, also `/favicon.ico`)."""

# No `from __future__ import annotations`: FastAPI reads the route functions' annotations at run time.

from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["ASSETS_PREFIX", "favicon_svg", "mount_docs"]

ASSETS_PREFIX: Final = "/docs-assets"


def favicon_svg() -> bytes:
    """The UI's icon (package data), also inlined into the HTML reporter's file."""
    return resources.files("sredrill").joinpath("server", "ui", "static", "favicon.svg").read_bytes()


def mount_docs(app: "FastAPI") -> None:
    """`GET /docs` (Swagger UI, every asset served here), `GET /favicon.svg` and `GET /favicon.ico`.

    The app must be created with `docs_url=None` and `redoc_url=None` (their pages load from a CDN).
    """
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import Response
    from fastapi.staticfiles import StaticFiles

    # Package data of `swagger-ui-py` (its static folder), found without importing its framework handlers.
    assets = resources.files("swagger_ui").joinpath("static")
    app.mount(ASSETS_PREFIX, StaticFiles(directory=str(assets)), name="docs-assets")
    icon = favicon_svg()

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Any:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} · API",
            swagger_js_url=f"{ASSETS_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PREFIX}/swagger-ui.css",
            swagger_favicon_url="/favicon.svg",
        )

    async def favicon() -> Any:
        return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    for path in ("/favicon.svg", "/favicon.ico"):
        app.add_api_route(path, favicon, methods=["GET"], include_in_schema=False)
