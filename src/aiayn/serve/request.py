"""What `POST /translate` takes: the request as a pydantic model, whose fields the OpenAPI
schema (`/openapi.json`) documents; the names are the command line's (`--target-prefix` is
`target_prefix`, `--src-lang` is `src_lang`)."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field

from aiayn.config import DecodeConfig, DocumentFormat
from aiayn.data.glossary import Glossary
from aiayn.decode.controls.words import Controls
from aiayn.documents.protect import Protector
from aiayn.documents.translate import RETRANSLATING, DocumentOptions

PAPER = DecodeConfig()  # the search's defaults: the paper's


class TranslateRequest(BaseModel):
    # a misspelt option is an error, not a default; and the schema's types hold: "beam": true
    # or "4" is refused, not read as 1 or 4 (schemathesis found it)
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str | list[str] = Field(
        description="one text, or a list of texts; with format docx or odt, the file in base64"
    )
    beam: int = Field(PAPER.beam, ge=1)
    nbest: int = Field(PAPER.nbest, ge=1)
    attention: bool = Field(False, description="also return the cross-attention matrix")
    format: DocumentFormat = Field(
        "lines",
        description="lines: each text is a sentence; else one whole document (po, xliff: "
        "its untranslated entries, marked for review)",
    )
    target_prefix: str | list[str] | None = Field(
        None, description="the text each translation starts with: one, or one per text"
    )
    glossary: list[list[str]] | None = Field(
        None,
        description="[source term, target term] pairs the translations must respect; a third "
        'item "inflect" lets a term-aware model choose the form ("exact", the default, keeps '
        "it as written)",
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
    src_lang: str | None = Field(
        None,
        description="a document's language (ISO 639-1, e.g. en) for its sentence splitter "
        '(default en); only with a "format" other than lines',
    )

    protect: list[str] = Field(
        [],
        max_length=20,
        description="regular expressions whose matches are kept verbatim, besides URLs, "
        "e-mail addresses, paths, file names, identifiers, numbers and placeholders",
    )
    no_protect: bool = Field(
        False, description="translate every span, URLs and placeholders too (protect: only those)"
    )
    retranslate: bool = Field(
        False,
        description="with format po or xliff: translate the entries that already have a "
        "translation too (default: only the empty ones)",
    )

    def protector(self) -> Protector | None:
        """The spans this request keeps verbatim; None: none (a bad pattern: ValueError)."""
        if self.no_protect and not self.protect:
            return None
        return Protector(tuple(self.protect), not self.no_protect, field="protect")

    def document_options(self) -> DocumentOptions:
        """How this request's document is read and translated (a misuse: ValueError)."""
        if self.retranslate and self.format not in RETRANSLATING:
            raise ValueError(
                f'"retranslate" is for "format" {" or ".join(RETRANSLATING)} (files that hold '
                f"translations); drop it or the format {self.format!r}"
            )
        found = DocumentOptions(
            progress=False,
            name="the document",
            protect=self.protector(),
            retranslate=self.retranslate,
        )
        return found if self.src_lang is None else replace(found, language=self.src_lang)

    def controls(self, n: int) -> Controls | None:
        """The request's controls for its n texts; None: none."""
        prefix = self.target_prefix
        prefixes = (prefix,) * n if isinstance(prefix, str) else prefix
        glossary = Glossary.of(self.glossary, self.glossary_case) if self.glossary else None
        found = Controls(
            None if prefixes is None else tuple(prefixes), glossary, tuple(self.suppress)
        )
        return found if found else None


FIELDS = tuple(TranslateRequest.model_fields)  # named when a request has another
