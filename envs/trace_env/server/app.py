"""The TRACE environment server: a thin shell over `sredrill.server` (the OpenEnv protocol, natively).

    uv run server                      # http://127.0.0.1:7860 (or --port N, or PORT=N)
    uv run server --host 0.0.0.0       # what the Docker image runs (HOST=0.0.0.0, PORT=7860)
    TRACE_TOKEN=… uv run server        # session routes need "Authorization: Bearer …" (or --token)
    uv run server --episode-key-file K # an evaluation server: families' episodes keyed by the secret in K
    uvicorn server.app:app             # the module-level app: answers loopback hosts only

Routes, sessions and protocols: sredrill's docs/server.md.
"""

import argparse
import os
import sys

from sredrill.errors import InputError
from sredrill.incidents.families import check_key
from sredrill.server import DEFAULT_HOST, DEFAULT_PORT, create_app, is_loopback, serve

# Every built-in task: the incident tasks (TRACE) and the RCA scenarios of the built-in packs.
app = create_app()


def main(argv: list[str] | None = None) -> None:
    """Serve the environment until interrupted; options from the arguments, else HOST, PORT and TRACE_TOKEN."""
    parser = argparse.ArgumentParser(prog="server", description="The TRACE environment server (OpenEnv).")
    parser.add_argument("--host", default=os.environ.get("HOST", DEFAULT_HOST), help="address to bind")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", DEFAULT_PORT)), help="0: a free port")
    parser.add_argument("--token", default=os.environ.get("TRACE_TOKEN") or None, help="require a bearer token")
    parser.add_argument(
        "--episode-key-file", help="a file holding the secret that keys the families' episodes (evaluation)"
    )
    args = parser.parse_args(argv)
    key = _episode_key(parser, args.episode_key_file)
    # A server bound beyond loopback must answer the host names it is reached by (a Space's, say).
    loopback = is_loopback(args.host)
    served = (
        app
        if loopback and args.token is None and key is None
        else create_app(loopback_only=loopback, token=args.token, episode_key=key)
    )
    serve(
        served, host=args.host, port=args.port, on_ready=lambda url: print(f"TRACE: serving on {url}", file=sys.stderr)
    )


def _episode_key(parser: argparse.ArgumentParser, path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return check_key(open(path, encoding="utf-8").read())
    except (OSError, UnicodeDecodeError) as exc:
        parser.error(f"--episode-key-file {path}: cannot read the key ({exc})")
    except InputError as exc:
        parser.error(f"--episode-key-file {path}: {exc.message}")


if __name__ == "__main__":
    main()
