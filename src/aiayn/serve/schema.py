"""What the API answers, as pydantic models: they document the responses in the OpenAPI schema
(`/openapi.json`) that clients and the fuzzer (schemathesis) check every answer against.

The routes return plain dicts: these models describe them and filter nothing, so a field added
to an answer is never silently dropped (the schema allows more fields than it names).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Problem(BaseModel):
    """Every refusal: 401, 413, 422, 429, 503."""

    detail: str = Field(description="what went wrong and what to do")


class Hypothesis(BaseModel):
    text: str
    score: float = Field(description="log P(Y|X) / lp(Y), what the search ranks by")


class Attention(BaseModel):
    source: list[str] = Field(description="the source's pieces")
    target: list[str] = Field(description="the translation's pieces, eos included")
    cross: list[list[float]] = Field(description="(target, source): last layer, heads' mean")


class Found(BaseModel):
    model_config = ConfigDict(extra="allow")  # fields other features add are kept

    text: str
    score: float
    nbest: list[Hypothesis] | None = Field(None, description="with nbest > 1, best first")
    attention: Attention | None = Field(None, description="with attention: true")


class Translations(BaseModel):
    model_config = ConfigDict(extra="allow")

    translations: list[Found] = Field(description="one per text, in their order")
    warnings: list[str] | None = Field(
        None,
        description="what the request should know: input in another language than the "
        "model's source (where the model's run names it and py3langid is installed)",
    )


class DocumentTranslation(BaseModel):
    """The answer to a request with "format" text, markdown or html."""

    document: str = Field(
        description="the translated document, its structure kept (docx, odt: in base64)"
    )
    sentences: int = Field(description="the sentences translated")
    warnings: list[str] | None = Field(None, description="as for lines")


class Search(BaseModel):
    alpha: float
    length_penalty: str
    stop: str
    origin: str = Field(description="where this length setting comes from")
    shortlist: bool = Field(
        False, description="decodes over the model's lexical shortlist (serve --no-shortlist: no)"
    )


class Health(BaseModel):
    status: str
    model: str
    batches: int = Field(description="model calls made so far")
    search: Search
    languages: list[str] = Field(
        [], description="a multilingual model's target languages (tgt_lang); [] if bilingual"
    )


def refusals(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` of a route that may refuse with these status codes."""
    return {code: {"model": Problem} for code in codes}
