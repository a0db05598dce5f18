"""The ASGI app: POST /translate, GET /health, and the page at /."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from aiayn.config import DecodeConfig, EngineConfig
from aiayn.engines import Translation, open_translator
from aiayn.serve.batcher import DynamicBatcher, model_thread
from aiayn.serve.body_limit import BodyLimit

PAPER = DecodeConfig()  # the search's defaults: the paper's

# One model call gathers the texts of up to this many full requests that arrive together.
REQUESTS_PER_BATCH = 4


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000  # per text
    max_texts: int = 32  # per request
    max_beam: int = 8

    @property
    def max_body(self) -> int:
        """Bytes a request body may have, checked before it is read: every text at its limit
        with each character JSON-escaped at its longest (a surrogate pair, 12 bytes), and room
        for the other fields."""
        return self.max_texts * (12 * self.max_chars + 16) + 4096


class TranslateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt option is an error, not a default

    text: str | list[str] = Field(description="one text, or a list of texts")
    beam: int = Field(PAPER.beam, ge=1)
    nbest: int = Field(PAPER.nbest, ge=1)
    attention: bool = Field(False, description="also return the cross-attention matrix")


FIELDS = tuple(TranslateRequest.model_fields)


def create_app(
    model_dir: str | Path,
    limits: Limits = Limits(),
    wait_ms: float = 5.0,
    engine: EngineConfig = EngineConfig(),
    search_options: dict[str, Any] | None = None,
) -> FastAPI:
    """The app on `model_dir`; `search_options` (DecodeConfig fields, e.g. alpha) change the
    translator's default search (the model's tuned length setting, else the paper's)."""
    thread = model_thread()  # the model is loaded in the thread that runs it (batcher.py)
    translator = thread.submit(open_translator, model_dir, engine).result()
    # compiled steps (with --compile) are built before the first request, not during one
    thread.submit(translator.warm_up, [1, PAPER.beam]).result()
    search = translator.default_search.replace(**(search_options or {}))
    origin = "set when the server started" if search_options else translator.search_origin
    print(
        f"search: beam {search.beam}, {search.length_penalty} alpha {search.alpha:g}, stop "
        f"{search.stop} ({origin})",
        file=sys.stderr,
    )

    def translate(texts: list[str], beam: int, nbest: int) -> list[list[Translation]]:
        return translator.nbest(texts, search.replace(beam=beam, nbest=nbest))

    def attention(text: str, found: Translation) -> dict:
        """The last layer's cross-attention (heads' mean) over the translation found: one
        teacher-forced pass, run in the model thread, not a second search."""
        maps = translator.attention(text, found)
        cross = maps.cross[-1].round(4).tolist()
        return {"source": maps.source, "target": maps.target_out, "cross": cross}

    batcher = DynamicBatcher(
        translate, max_texts=REQUESTS_PER_BATCH * limits.max_texts, wait_ms=wait_ms, executor=thread
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        batcher.start()
        yield
        await batcher.stop()

    app = FastAPI(title="aiayn", lifespan=lifespan)
    app.state.batcher = batcher
    app.add_middleware(BodyLimit, max_bytes=limits.max_body)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc'] if x != 'body') or 'body'}: {e['msg']}"
            + (f" (known: {', '.join(FIELDS)})" if e["type"] == "extra_forbidden" else "")
            for e in err.errors()
        )
        return JSONResponse({"detail": f"invalid request: {problems}"}, status_code=422)

    @app.get("/health")
    async def health() -> dict:
        return {
            "status": "ok",
            "model": str(model_dir),
            "batches": batcher.batches,
            "search": {f: getattr(search, f) for f in ("alpha", "length_penalty", "stop")}
            | {"origin": origin},
        }

    @app.post("/translate")
    async def translate_endpoint(req: TranslateRequest) -> dict:
        texts = [req.text] if isinstance(req.text, str) else req.text
        check_limits(texts, req, limits)
        results = await batcher.submit(texts, req.beam, req.nbest)
        out = []
        for text, found in zip(texts, results, strict=True):
            item: dict = {"text": found[0].text, "score": found[0].score}
            if req.nbest > 1:
                item["nbest"] = [{"text": t.text, "score": t.score} for t in found]
            if req.attention and text.strip():
                try:
                    item["attention"] = await batcher.in_model_thread(attention, text, found[0])
                except ValueError as err:  # an engine that cannot show them says why
                    raise HTTPException(422, f"attention maps: {err}") from None
            out.append(item)
        return {"translations": out}

    @app.get("/", response_class=HTMLResponse)
    async def page() -> str:
        return resources.files("aiayn.serve").joinpath("static/index.html").read_text("utf-8")

    return app


def check_limits(texts: list[str], req: TranslateRequest, limits: Limits) -> None:
    if not texts:
        raise HTTPException(422, "invalid request: text: give at least one text")
    if len(texts) > limits.max_texts:
        raise HTTPException(
            413,
            f"{len(texts)} texts in one request; the limit is "
            f"{limits.max_texts}: send several requests",
        )
    for i, t in enumerate(texts):
        if bad := next((c for c in t if "\ud800" <= c <= "\udfff"), None):
            raise HTTPException(
                422,
                f"invalid request: text {i}: holds a lone surrogate "
                f"(\\u{ord(bad):04x}) at character {t.index(bad)}, which is "
                "not Unicode text; send valid UTF-8",
            )
        if len(t) > limits.max_chars:
            raise HTTPException(
                413,
                f"text {i} has {len(t)} characters; the limit is "
                f"{limits.max_chars}: split it into sentences",
            )
    if req.beam > limits.max_beam or req.nbest > req.beam:
        raise HTTPException(
            422,
            f"invalid request: need 1 <= nbest ({req.nbest}) <= beam "
            f"({req.beam}) <= {limits.max_beam}",
        )
