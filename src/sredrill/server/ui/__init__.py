"""The web UI of `sredrill serve`: pages rendered on the server, charts as inline SVG, one small script.

No build step and no network: the CSS and the script live in `static/` and are inlined into every page.
"""

__all__: list[str] = []
