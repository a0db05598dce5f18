"""The endpoints: POST /translate (lines, or one document), GET /health, and the page at /.
Each reads what the server shares (`Served`, the batcher) from the app's state; `add_routes`
puts them on the app itself (a rate limit finds a route's function there, serve/rate.py)."""

from __future__ import annotations

from importlib import resources
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse

from aiayn.decode.rules import OverBudgetError
from aiayn.engines import Alternative, Translation
from aiayn.engines.languages import MultilingualTranslator, for_language
from aiayn.serve.batcher import BusyError, DynamicBatcher
from aiayn.serve.limits import check_document, check_limits
from aiayn.serve.request import TranslateRequest
from aiayn.serve.schema import DocumentTranslation, Health, Translations, refusals
from aiayn.serve.served import LENGTH_FIELDS, Served


def served(request: Request) -> Served:
    return request.app.state.served


def batcher(request: Request) -> DynamicBatcher:
    return request.app.state.batcher


Shared = Annotated[Served, Depends(served)]
Batcher = Annotated[DynamicBatcher, Depends(batcher)]


async def health(s: Shared, b: Batcher) -> dict:
    return {
        "status": "ok",
        "model": str(s.model_dir),
        "batches": b.batches,
        "search": {f: getattr(s.search, f) for f in LENGTH_FIELDS}
        | {"origin": s.origin, "shortlist": s.shortlisted},
        "languages": s.languages,
    }


async def translate_endpoint(req: TranslateRequest, s: Shared, b: Batcher) -> dict:
    if req.format != "lines":
        return await translate_document(req, s, b)
    texts = [req.text] if isinstance(req.text, str) else req.text
    check_limits(texts, req, s.limits)
    if req.tgt_lang is not None:  # the tag in front of each text: batches may mix languages
        try:
            into = for_language(s.translator, req.tgt_lang, "tgt_lang")
        except ValueError as err:
            raise HTTPException(422, f"invalid request: {err}") from None
        texts = into.tagged(texts) if isinstance(into, MultilingualTranslator) else texts
    alternatives: list[list[Alternative]] = []
    try:
        controls = req.controls(len(texts))
        protector = req.protector()
        if (
            controls is None
            and not req.alternatives
            and protector is not None
            and protector.default
        ):
            results = await within_budget(b, texts, req, s)
        else:
            results, alternatives = await b.in_model_thread(s.steered, texts, req, controls)
    except OverBudgetError:
        raise HTTPException(
            422, f"over budget: this request took longer than {s.limits.max_seconds:g} s"
        ) from None
    except ValueError as err:  # a bad glossary, prefix or suppressed word; an engine's no
        raise HTTPException(422, f"invalid request: {err}") from None
    out = [
        await answer(req, s, b, text, found, alternatives[i] if alternatives else None)
        for i, (text, found) in enumerate(zip(texts, results, strict=True))
    ]
    warnings = s.warnings(texts, "the request")
    return {"translations": out} | ({"warnings": warnings} if warnings else {})


async def translate_document(req: TranslateRequest, s: Shared, b: Batcher) -> dict:
    """A request of one document, translated whole in the model thread."""
    document = check_document(req, s.limits)
    try:
        options = req.document_options()
    except ValueError as err:
        raise HTTPException(422, f"invalid request: {err}") from None
    # the language of a text document (a docx or odt one comes as base64: not read here)
    warnings = s.warnings([document] if isinstance(document, str) else [], "the document")
    try:
        found = await b.in_model_thread(
            s.document, document, req.format, req.beam, req.tgt_lang, options
        )
        return found | ({"warnings": warnings} if warnings else {})
    except ValueError as err:  # e.g. a sentence over the input limit
        raise HTTPException(422, f"the document: {err}") from None


async def answer(
    req: TranslateRequest,
    s: Served,
    b: DynamicBatcher,
    text: str,
    found: list[Translation],
    alternatives: list[Alternative] | None,
) -> dict:
    """One text's answer: the best translation, and the n best, alternatives and attention
    where asked for."""
    item: dict = {"text": found[0].text, "score": found[0].score}
    if req.nbest > 1:
        item["nbest"] = [{"text": t.text, "score": t.score} for t in found]
    if alternatives is not None:
        item["alternatives"] = [
            {"word": a.word, "text": a.translation.text, "score": a.translation.score}
            for a in alternatives
        ]
    if req.attention and text.strip():
        try:
            item["attention"] = await b.in_model_thread(
                s.attention, text, found[0], req.protector()
            )
        except ValueError as err:  # an engine that cannot show them says why
            raise HTTPException(422, f"attention maps: {err}") from None
    return item


async def within_budget(
    b: DynamicBatcher, texts: list[str], req: TranslateRequest, s: Served
) -> list[list[Translation]]:
    """The request's results; 503 at once when too many wait, 422 past the time budget."""
    try:
        return await b.submit(texts, req.beam, req.nbest)
    except BusyError:
        raise HTTPException(
            503,
            f"the server is busy (--max-pending {s.limits.max_pending} reached): try again shortly",
            headers={"Retry-After": "1"},
        ) from None
    except OverBudgetError:
        raise HTTPException(
            422,
            f"over budget: translating this request took longer than the server's budget of "
            f"{s.limits.max_seconds:g} s per request (and at most {s.limits.max_output_tokens} "
            "output tokens per text): send shorter texts, split into sentences",
        ) from None


async def page() -> str:
    return resources.files("aiayn.serve").joinpath("static/index.html").read_text("utf-8")


def add_routes(app: FastAPI) -> None:
    app.get("/health", response_model=Health)(health)
    app.post(
        "/translate",
        response_model=Translations | DocumentTranslation,
        response_model_exclude_none=True,
        responses=refusals(401, 413, 422, 429, 503),
    )(translate_endpoint)
    app.get("/", response_class=HTMLResponse)(page)
