"""The ASGI app: POST /translate, GET /health, and the page at / (routes.py), on a model that
runs in its own thread behind a dynamic batcher, with the limits of a server on a network."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from aiayn.config import EngineConfig
from aiayn.serve.batcher import DynamicBatcher, model_thread
from aiayn.serve.body_limit import BodyLimit
from aiayn.serve.errors import add_error_handlers
from aiayn.serve.keys import KeyCheck
from aiayn.serve.limits import Limits
from aiayn.serve.rate import add_rate_limit
from aiayn.serve.routes import add_routes
from aiayn.serve.served import Served

__all__ = ["Limits", "create_app"]

# One model call gathers the texts of up to this many full requests that arrive together.
REQUESTS_PER_BATCH = 4


def create_app(
    model_dir: str | Path,
    limits: Limits = Limits(),
    wait_ms: float = 5.0,
    engine: EngineConfig = EngineConfig(),
    search_options: dict[str, Any] | None = None,
    api_keys: frozenset[str] = frozenset(),
) -> FastAPI:
    """The app on `model_dir`; `search_options` (DecodeConfig fields, e.g. alpha) change the
    translator's default search (the model's tuned length setting, else the paper's); with
    `api_keys`, only requests that carry one are answered (serve/keys.py)."""
    thread = model_thread()  # the model is loaded in the thread that runs it (batcher.py)
    served = Served.open(model_dir, limits, engine, search_options or {}, thread)
    app = FastAPI(title="aiayn", lifespan=lifespan)
    app.state.served = served
    app.state.batcher = DynamicBatcher(
        served.translate,
        max_texts=REQUESTS_PER_BATCH * limits.max_texts,
        wait_ms=wait_ms,
        executor=thread,
        max_pending=limits.max_pending,
    )
    app.add_middleware(BodyLimit, max_bytes=limits.max_body)
    add_error_handlers(app)
    add_routes(app)
    if api_keys:
        app.add_middleware(KeyCheck, keys=api_keys)
    if limits.rate:
        add_rate_limit(app, limits.rate)  # after the routes: the open ones are exempted
    return app


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The batcher runs while the app does."""
    batcher: DynamicBatcher = app.state.batcher
    batcher.start()
    yield
    await batcher.stop()
