"""API keys: `aiayn serve --api-keys FILE` answers only requests that carry one of its keys in
`Authorization: Bearer KEY`.

Keys are compared in constant time (`hmac.compare_digest`, against every key, so neither the
match nor its position shows in the timing) and never written to a log or an error message:
a bad line of the key file is named by its number only.
"""

from __future__ import annotations

import hmac
import re
from pathlib import Path

from starlette.responses import JSONResponse

from aiayn.serve.body_limit import ASGIApp, Receive, Scope, Send

MIN_KEY_CHARS = 16
# RFC 6750's b64token: what a Bearer credential may hold.
KEY_CHARS = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
MAKE_ONE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"

# Open without a key: the page (it asks for one), the health check, and the API's schema.
OPEN_PATHS = frozenset({"/", "/health", "/openapi.json", "/docs", "/docs/oauth2-redirect"})


def read_keys(path: Path) -> frozenset[str]:
    """The keys of a key file: one per line; blank lines and lines starting with # are skipped."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ValueError(
            f"--api-keys {path}: {err.strerror or err}; give a file with one key per line"
        ) from None
    except UnicodeDecodeError as err:
        line = text_line(err.object, err.start)
        raise ValueError(
            f"{path}, line {line}: not UTF-8 text; a key is plain ASCII ({MAKE_ONE})"
        ) from None
    keys = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        key = raw.strip()
        if not key or key.startswith("#"):
            continue
        if not KEY_CHARS.fullmatch(key):
            raise ValueError(
                f"{path}, line {number}: a key holds only letters, digits and -._~+/ (then = "
                f"padding), one per line, no spaces; make one with: {MAKE_ONE}"
            )
        if len(key) < MIN_KEY_CHARS:
            raise ValueError(
                f"{path}, line {number}: a key of {len(key)} characters is too easy to guess; "
                f"use at least {MIN_KEY_CHARS}, e.g. from: {MAKE_ONE}"
            )
        keys.add(key)
    if not keys:
        raise ValueError(f"{path} holds no key: put one key per line, e.g. from: {MAKE_ONE}")
    return frozenset(keys)


def text_line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def bearer(scope: Scope) -> str | None:
    """The credential of an `Authorization: Bearer ...` header, or None."""
    header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
    scheme, _, credential = header.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" and credential.strip() else None


def known(key: str, keys: frozenset[str]) -> bool:
    """Whether `key` is one of `keys`, compared with each in constant time."""
    given = key.encode("utf-8", "surrogateescape")
    matches = [hmac.compare_digest(given, k.encode()) for k in keys]
    return any(matches)


class KeyCheck:
    """ASGI middleware: 401 for a request outside OPEN_PATHS without one of `keys`."""

    def __init__(self, app: ASGIApp, keys: frozenset[str]) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        key = bearer(scope)
        if key is not None and known(key, self.keys):
            await self.app(scope, receive, send)
            return
        detail = (
            "this server needs an API key: send the header 'Authorization: Bearer KEY' (its "
            "operator gives keys)"
            if key is None
            else "the API key sent is not one of this server's keys: check it, or ask the "
            "server's operator for one"
        )
        refusal = JSONResponse({"detail": detail}, 401, {"WWW-Authenticate": "Bearer"})
        await refusal(scope, receive, send)
