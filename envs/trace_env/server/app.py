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

from sredrill.server import DEFAULT_HOST, DEFAULT_PORT, create_app, is_loopback, read_key_file, serve

# Every built-in task: the incident tasks (TRACE) and the RCA scenarios of the built-in packs.
app = create_app()


def main(argv: list[str] | None = None) -> None:
    """Serve the environment until interrupted; options from the arguments, else HOST, PORT and TRACE_TOKEN."""
    parser = argparse.ArgumentParser(prog="server", description="The TRACE environment server (OpenEnv).")
    parser.add_argument("--host", default=os.environ.get("HOST", DEFAULT_HOST), help="address to bind")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", DEFAULT_PORT)), help="0: a free port")
    parser.add_argument("--token", default=os.environ.get("TRACE_TOKEN") or None, help="require a bearer token")
    parser.add_argument("--episode-key-file", help="a file with the secret keying the families' episodes (evaluation)")
    args = parser.parse_args(argv)
    try:  # an unreadable file or a short key: a usage error naming the file and how to make a key
        key = read_key_file(args.episode_key_file) if args.episode_key_file else None
    except Exception as exc:
        parser.error(f"--episode-key-file: {exc}")
    # A server bound beyond loopback must answer the host names it is reached by (a Space's, say).
    loopback = is_loopback(args.host)
    keep = loopback and args.token is None and key is None
    served = app if keep else create_app(loopback_only=loopback, token=args.token, episode_key=key)
    serve(
        served, host=args.host, port=args.port, on_ready=lambda url: print(f"TRACE: serving on {url}", file=sys.stderr)
    )


if __name__ == "__main__":
    main()
