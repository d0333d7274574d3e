"""HTTP clients of sredrill (`http(s)://` agents, `openai:` agents, the judge): one TLS context per process.

httpx builds a new `ssl.SSLContext` for every client it creates, reading the whole certificate bundle each
time (about 20 ms of CPU, 50 ms on a loaded machine), and it does so even for a client that only ever speaks
plain `http://`. Every client sredrill opens is made by `async_client`, which hands httpx a context built once:

- `https://`: `tls_context()`, verifying, built on first use the way httpx builds its default
  (`SSL_CERT_FILE`, else `SSL_CERT_DIR`, else certifi's bundle) and then shared by every client.
- `http://`: a context with no trusted certificate at all, which costs no bundle read. No client here follows
  redirects, so it is never used; if one ever reached an `https://` server with it, the handshake would fail
  (nothing is trusted) rather than succeed unverified.

A client (its connection pool) belongs to one event loop, so clients are not shared; their TLS context is
immutable once built, and `ssl.SSLContext` may serve any number of connections and threads.

Examples:
    >>> async with async_client("https://api.openai.com/v1", timeout=30) as client:   # doctest: +SKIP
    ...     await client.get("https://api.openai.com/v1/models")
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import Any

import httpx

__all__ = ["async_client", "tls_context", "verify_for"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verifying client context every `https://` client of this process shares (built on first use).

    The trust anchors are httpx's defaults: `SSL_CERT_FILE` or `SSL_CERT_DIR` when set, else certifi's bundle.
    """
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi  # a dependency of httpx

    return ssl.create_default_context(cafile=certifi.where())


@functools.cache
def _plain_context() -> ssl.SSLContext:
    # PROTOCOL_TLS_CLIENT verifies certificates and host names by default; with no trust anchor loaded it
    # accepts none.
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def verify_for(url: str | httpx.URL) -> ssl.SSLContext:
    """The TLS context for a client of `url`: the shared verifying one for `https://`, else one trusting nothing."""
    return tls_context() if httpx.URL(url).scheme == "https" else _plain_context()


def async_client(url: str | httpx.URL, **options: Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` for requests to `url` (its scheme chooses the TLS context, see `verify_for`).

    Args:
        url: where the client sends its requests (a base URL or the one URL it posts to).
        **options: passed to `httpx.AsyncClient` (`timeout`, `headers`, `transport`); not `verify`.
    """
    return httpx.AsyncClient(verify=verify_for(url), **options)
