"""Rate limits per API key, or per client address where the server has no keys:
`aiayn serve --rate-limit "60/minute"`. slowapi (the `limits` package underneath) counts the
requests; a request over the limit gets 429 with `Retry-After`.
"""

from __future__ import annotations

import hashlib

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from limits import parse_many
from slowapi import Limiter
from slowapi.errors import RateLimitExceeded
from slowapi.middleware import SlowAPIASGIMiddleware
from slowapi.util import get_remote_address

from aiayn.serve.keys import OPEN_PATHS, bearer

EXAMPLES = '"60/minute", "5/second" or "10/second;1000/hour"'


def check_rate(rate: str) -> str:
    """`rate` if `limits` reads it as one or more rates, else an error naming it."""
    try:
        parsed = parse_many(rate)
    except ValueError:
        parsed = []
    if not parsed or any(item.amount < 1 for item in parsed):
        raise ValueError(
            f"--rate-limit {rate!r} is not a rate: give requests per period, e.g. {EXAMPLES}"
        )
    return rate


def client_key(request: Request) -> str:
    """Whom a request counts against: its API key (hashed: counters never hold a key), else
    the address it came from."""
    key = bearer(request.scope)
    if key is not None:
        return "key:" + hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return "address:" + get_remote_address(request)


def add_rate_limit(app: FastAPI, rate: str) -> None:
    """Limit every route of `app` outside OPEN_PATHS to `rate` per client: call it after the
    routes are defined (the open ones are exempted by their functions)."""
    limiter = Limiter(key_func=client_key, default_limits=[rate], headers_enabled=True)
    for route in app.routes:
        if getattr(route, "path", None) in OPEN_PATHS and hasattr(route, "endpoint"):
            limiter.exempt(route.endpoint)
    app.state.limiter = limiter

    async def over(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RateLimitExceeded)
        answer = JSONResponse(
            {"detail": f"rate limit exceeded: {exc.detail} per client; wait and try again"}, 429
        )
        return limiter._inject_headers(answer, request.state.view_rate_limit)  # Retry-After

    app.add_exception_handler(RateLimitExceeded, over)
    app.add_middleware(SlowAPIASGIMiddleware)
