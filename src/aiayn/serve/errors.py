"""How the API refuses what it cannot read: every refusal is {"detail": what went wrong and
what to do}, as schema.py's `Problem` documents it."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from aiayn.serve.request import FIELDS


async def invalid(request: Request, err: RequestValidationError) -> JSONResponse:
    """A request the model does not take: each problem named by its field, and for a field it
    does not know, the ones it does."""
    problems = "; ".join(
        f"{'.'.join(str(x) for x in e['loc'] if x != 'body') or 'body'}: {e['msg']}"
        + (f" (known: {', '.join(FIELDS)})" if e["type"] == "extra_forbidden" else "")
        for e in err.errors()
    )
    return JSONResponse({"detail": f"invalid request: {problems}"}, status_code=422)


async def refused(request: Request, err: StarletteHTTPException) -> Response:
    """FastAPI's own 400, for a body it cannot decode (not UTF-8), is a 422 that says what
    to do, as for any other unreadable body (schemathesis found it)."""
    if err.status_code == 400:
        detail = "invalid request: the body is not JSON in UTF-8: send JSON encoded as UTF-8"
        return JSONResponse({"detail": detail}, status_code=422)
    return await http_exception_handler(request, err)


def add_error_handlers(app: FastAPI) -> None:
    app.exception_handler(RequestValidationError)(invalid)
    app.exception_handler(StarletteHTTPException)(refused)
