"""What a server allows (the limits of `aiayn serve`: per text, per request, per client, and a
model call's budget), and the checks that refuse a request over them, saying what to do."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException

from aiayn.serve.request import TranslateRequest


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000  # per text
    max_texts: int = 32  # per request
    max_beam: int = 8
    max_output_tokens: int = 512  # per text: a cap on the search's a * S + b
    max_seconds: float = 10.0  # a model call's deadline; a request past it gets 422
    max_pending: int = 128  # requests waiting or being translated; one more gets 503 at once
    rate: str = ""  # per API key or client address, e.g. "60/minute" (slowapi); "" = none
    max_document_chars: int = 30_000  # a document's running text ("format" other than lines)
    max_document_bytes: int = 280_000  # a docx or odt file, before base64 (within max_body)

    @property
    def max_body(self) -> int:
        """Bytes a request body may have, checked before it is read: every text at its limit
        with each character JSON-escaped at its longest (a surrogate pair, 12 bytes), or a
        docx or odt file at its limit in base64; and room for the other fields."""
        texts = self.max_texts * (12 * self.max_chars + 16)
        return max(texts, 4 * self.max_document_bytes // 3 + 4) + 4096


def check_limits(texts: list[str], req: TranslateRequest, limits: Limits) -> None:
    """A request of lines: its texts, their size, and its search."""
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
    if req.src_lang is not None:
        raise HTTPException(
            422,
            'invalid request: "src_lang" is a document\'s language, for its sentence splitter: '
            'give it with "format": text, markdown or html, or drop it',
        )
    if req.retranslate:
        raise HTTPException(
            422, 'invalid request: "retranslate" is for "format" po or xliff; drop it'
        )


def check_document(req: TranslateRequest, limits: Limits) -> str | bytes:
    """A request of one document ("format" other than lines): the document, a docx or odt
    file decoded from base64."""
    from aiayn.documents import BINARY

    if not isinstance(req.text, str) or req.nbest != 1 or req.attention:
        raise HTTPException(
            422,
            f'invalid request: "format": "{req.format}" takes one text (the document), '
            "without nbest or attention",
        )
    if req.beam > limits.max_beam:
        raise HTTPException(422, f"invalid request: beam {req.beam} > {limits.max_beam}")
    if req.format in BINARY:
        return check_file(req.text, req.format, limits)
    if len(req.text) > limits.max_document_chars:
        raise HTTPException(
            413,
            f"the document has {len(req.text)} characters; the limit is "
            f"{limits.max_document_chars}: send it in parts",
        )
    return req.text


def check_file(text: str, fmt: str, limits: Limits) -> bytes:
    """A docx or odt file sent in base64: its size, and the running text it holds."""
    import base64
    import binascii

    from aiayn.documents.translate import READERS

    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as err:
        raise HTTPException(
            422,
            f'invalid request: "text": with "format": "{fmt}", the file in base64 ({err}); '
            "encode the file's bytes in base64",
        ) from None
    if len(data) > limits.max_document_bytes:
        raise HTTPException(
            413,
            f"the file has {len(data)} bytes; the limit is {limits.max_document_bytes}: "
            "send it in parts",
        )
    try:
        chars = sum(len(unit.text) for unit in READERS[fmt](data).units)
    except ValueError as err:
        raise HTTPException(422, f"the document: {err}") from None
    if chars > limits.max_document_chars:
        raise HTTPException(
            413,
            f"the document has {chars} characters of text; the limit is "
            f"{limits.max_document_chars}: send it in parts",
        )
    return data
