"""The ASGI app: POST /translate, GET /health, and the page at /."""

from __future__ import annotations

import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from aiayn.config import DecodeConfig, EngineConfig
from aiayn.decode.controls.glossary import Glossary
from aiayn.decode.controls.words import Controls
from aiayn.decode.rules import OverBudgetError
from aiayn.engines import Translation, open_translator
from aiayn.engines.languages import MultilingualTranslator, for_language, model_languages
from aiayn.serve.batcher import BusyError, DynamicBatcher, model_thread
from aiayn.serve.body_limit import BodyLimit
from aiayn.serve.keys import KeyCheck
from aiayn.serve.rate import add_rate_limit
from aiayn.serve.schema import DocumentTranslation, Health, Translations, refusals

PAPER = DecodeConfig()  # the search's defaults: the paper's

# One model call gathers the texts of up to this many full requests that arrive together.
REQUESTS_PER_BATCH = 4


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000  # per text
    max_texts: int = 32  # per request
    max_beam: int = 8
    max_output_tokens: int = 512  # per text: a cap on the search's a * S + b
    max_seconds: float = 10.0  # a model call's deadline; a request past it gets 422
    max_pending: int = 128  # requests waiting or being translated; one more gets 503 at once
    rate: str = ""  # per API key or client address, e.g. "60/minute" (slowapi); "" = none
    max_document_chars: int = 30_000  # a document ("format": text, markdown, html)

    @property
    def max_body(self) -> int:
        """Bytes a request body may have, checked before it is read: every text at its limit
        with each character JSON-escaped at its longest (a surrogate pair, 12 bytes), and room
        for the other fields."""
        return self.max_texts * (12 * self.max_chars + 16) + 4096


class TranslateRequest(BaseModel):
    # a misspelt option is an error, not a default; and the schema's types hold: "beam": true
    # or "4" is refused, not read as 1 or 4 (schemathesis found it)
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str | list[str] = Field(description="one text, or a list of texts")
    beam: int = Field(PAPER.beam, ge=1)
    nbest: int = Field(PAPER.nbest, ge=1)
    attention: bool = Field(False, description="also return the cross-attention matrix")
    format: Literal["lines", "text", "markdown", "html"] = Field(
        "lines", description="lines: each text is a sentence; else one whole document"
    )
    target_prefix: str | list[str] | None = Field(
        None, description="the text each translation starts with: one, or one per text"
    )
    glossary: list[list[str]] | None = Field(
        None, description="[source term, target term] pairs the translations must respect"
    )
    glossary_case: bool = Field(False, description="match source terms' case exactly")
    suppress: list[str] = Field([], description="words the translations must never contain")
    alternatives: int = Field(
        0, ge=0, le=10, description="the k likeliest words after the prefix, each completed"
    )
    tgt_lang: str | None = Field(
        None,
        description="a multilingual model's output language (ISO 639-1, e.g. de; /health "
        "lists the model's languages); a bilingual model takes none",
    )

    def controls(self, n: int) -> Controls | None:
        """The request's controls for its n texts; None: none."""
        prefix = self.target_prefix
        prefixes = (prefix,) * n if isinstance(prefix, str) else prefix
        glossary = Glossary.of(self.glossary, self.glossary_case) if self.glossary else None
        found = Controls(
            None if prefixes is None else tuple(prefixes), glossary, tuple(self.suppress)
        )
        return found if found else None


FIELDS = tuple(TranslateRequest.model_fields)


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
    translator = thread.submit(open_translator, model_dir, engine).result()
    # compiled steps (with --compile) are built before the first request, not during one
    thread.submit(translator.warm_up, [1, PAPER.beam]).result()
    search = translator.default_search.overridden(search_options or {})
    languages = model_languages(translator)  # [] for a bilingual model
    origin = "set when the server started" if search_options else translator.search_origin
    print(
        f"search: beam {search.beam}, {search.length_penalty} alpha {search.alpha:g}, stop "
        f"{search.stop} ({origin})",
        file=sys.stderr,
    )

    def translate(texts: list[str], beam: int, nbest: int) -> list[list[Translation]]:
        """One model call, within the budget: at most max_output_tokens per text, and a
        deadline max_seconds from now (checked once per output step)."""
        deadline = time.monotonic() + limits.max_seconds
        return translator.nbest(texts, budgeted.replace(beam=beam, nbest=nbest, deadline=deadline))

    budgeted = search.replace(max_output_tokens=limits.max_output_tokens)

    def steered(texts: list[str], req: TranslateRequest, controls: Controls | None) -> tuple:
        """A request with controls or alternatives, on its own (its batch mates would need
        the same controls): its n-best lists and each text's alternatives."""
        deadline = time.monotonic() + limits.max_seconds  # the budget of `translate`
        cfg = budgeted.replace(beam=req.beam, nbest=req.nbest, deadline=deadline)
        found = translator.nbest(texts, cfg, controls)
        alts = []
        for i, text in enumerate(texts if req.alternatives else []):
            one = (
                replace(controls, target_prefix=(controls.target_prefix[i],))
                if (controls and controls.target_prefix is not None)
                else controls
            )
            alts.append(translator.alternatives(text, req.alternatives, cfg, one))
        return found, alts

    def attention(text: str, found: Translation) -> dict:
        """The last layer's cross-attention (heads' mean) over the translation found: one
        teacher-forced pass, run in the model thread, not a second search."""
        maps = translator.attention(text, found)
        cross = maps.cross[-1].round(4).tolist()
        return {"source": maps.source, "target": maps.target_out, "cross": cross}

    batcher = DynamicBatcher(
        translate,
        max_texts=REQUESTS_PER_BATCH * limits.max_texts,
        wait_ms=wait_ms,
        executor=thread,
        max_pending=limits.max_pending,
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

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, err: StarletteHTTPException) -> Response:
        """FastAPI's own 400, for a body it cannot decode (not UTF-8), is a 422 that says what
        to do, as for any other unreadable body (schemathesis found it)."""
        if err.status_code == 400:
            detail = "invalid request: the body is not JSON in UTF-8: send JSON encoded as UTF-8"
            return JSONResponse({"detail": detail}, status_code=422)
        return await http_exception_handler(request, err)

    @app.get("/health", response_model=Health)
    async def health() -> dict:
        return {
            "status": "ok",
            "model": str(model_dir),
            "batches": batcher.batches,
            "search": {f: getattr(search, f) for f in ("alpha", "length_penalty", "stop")}
            | {"origin": origin},
            "languages": languages,
        }

    def document(text: str, fmt: str, beam: int, lang: str | None) -> dict:
        """A whole document, as `aiayn translate --format` gives it, in the model thread."""
        from aiayn.documents import DocumentOptions, translate_document

        options = DocumentOptions(progress=False, name="the document")
        into = for_language(translator, lang, "tgt_lang")
        out, n = translate_document(into, text, fmt, search.replace(beam=beam), options)
        return {"document": out, "sentences": n}

    @app.post(
        "/translate",
        response_model=Translations | DocumentTranslation,
        response_model_exclude_none=True,
        responses=refusals(401, 413, 422, 429, 503),
    )
    async def translate_endpoint(req: TranslateRequest) -> dict:
        if req.format != "lines":
            check_document(req, limits)
            try:
                return await batcher.in_model_thread(
                    document, req.text, req.format, req.beam, req.tgt_lang
                )
            except ValueError as err:  # e.g. a sentence over the input limit
                raise HTTPException(422, f"the document: {err}") from None
        texts = [req.text] if isinstance(req.text, str) else req.text
        check_limits(texts, req, limits)
        if req.tgt_lang is not None:  # the tag in front of each text: batches may mix languages
            try:
                into = for_language(translator, req.tgt_lang, "tgt_lang")
            except ValueError as err:
                raise HTTPException(422, f"invalid request: {err}") from None
            texts = into.tagged(texts) if isinstance(into, MultilingualTranslator) else texts
        alternatives: list = []
        try:
            controls = req.controls(len(texts))
            if controls is None and not req.alternatives:
                results = await within_budget(batcher, texts, req, limits)
            else:
                results, alternatives = await batcher.in_model_thread(steered, texts, req, controls)
        except OverBudgetError:
            raise HTTPException(
                422, f"over budget: this request took longer than {limits.max_seconds:g} s"
            ) from None
        except ValueError as err:  # a bad glossary, prefix or suppressed word; an engine's no
            raise HTTPException(422, f"invalid request: {err}") from None
        out = []
        for i, (text, found) in enumerate(zip(texts, results, strict=True)):
            item: dict = {"text": found[0].text, "score": found[0].score}
            if req.nbest > 1:
                item["nbest"] = [{"text": t.text, "score": t.score} for t in found]
            if alternatives:
                item["alternatives"] = [
                    {"word": a.word, "text": a.translation.text, "score": a.translation.score}
                    for a in alternatives[i]
                ]
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

    if api_keys:
        app.add_middleware(KeyCheck, keys=api_keys)
    if limits.rate:
        add_rate_limit(app, limits.rate)  # after the routes: the open ones are exempted
    return app


async def within_budget(
    batcher: DynamicBatcher, texts: list[str], req: TranslateRequest, limits: Limits
) -> list[list[Translation]]:
    """The request's results; 503 at once when too many wait, 422 past the time budget."""
    try:
        return await batcher.submit(texts, req.beam, req.nbest)
    except BusyError:
        raise HTTPException(
            503,
            f"the server is busy (--max-pending {limits.max_pending} reached): try again shortly",
            headers={"Retry-After": "1"},
        ) from None
    except OverBudgetError:
        raise HTTPException(
            422,
            f"over budget: translating this request took longer than the server's budget of "
            f"{limits.max_seconds:g} s per request (and at most {limits.max_output_tokens} "
            "output tokens per text): send shorter texts, split into sentences",
        ) from None


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


def check_document(req: TranslateRequest, limits: Limits) -> None:
    if not isinstance(req.text, str) or req.nbest != 1 or req.attention:
        raise HTTPException(
            422,
            f'invalid request: "format": "{req.format}" takes one text (the document), '
            "without nbest or attention",
        )
    if len(req.text) > limits.max_document_chars:
        raise HTTPException(
            413,
            f"the document has {len(req.text)} characters; the limit is "
            f"{limits.max_document_chars}: send it in parts",
        )
    if req.beam > limits.max_beam:
        raise HTTPException(422, f"invalid request: beam {req.beam} > {limits.max_beam}")
