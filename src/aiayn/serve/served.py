"""What the endpoints share, as one explicit object: the model (opened, and run, in its own
thread), its search, the languages it has, and the limits; and the calls the endpoints make
in the model thread."""

from __future__ import annotations

import base64
import sys
import time
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aiayn.config import DecodeConfig, DocumentFormat, EngineConfig
from aiayn.decode.controls.words import Controls
from aiayn.documents import DocumentOptions
from aiayn.documents.lines import LineTranslator
from aiayn.documents.protect import Protector
from aiayn.engines import Alternative, Translation, Translator, open_translator
from aiayn.engines.languages import for_language, model_languages
from aiayn.evaluate.mismatch import mismatch_warning, model_source_language
from aiayn.serve.limits import Limits
from aiayn.serve.request import PAPER, TranslateRequest

LENGTH_FIELDS = ("alpha", "length_penalty", "stop")  # what /health says of the search
PROTECTOR = Protector()  # what a request keeps verbatim unless it asks otherwise


@dataclass(frozen=True)
class Served:
    model_dir: str | Path
    translator: Translator
    search: DecodeConfig  # the model's tuned search (else the paper's), the server's over it
    origin: str  # where its length setting comes from, in words
    languages: list[str]  # a multilingual model's target languages; [] for a bilingual one
    limits: Limits
    source_lang: str | None = None  # the language it translates from, where its run says

    def warnings(self, texts: list[str], name: str) -> list[str]:
        """What a request should be told besides its translations: input in another language
        than the model's source."""
        found = mismatch_warning(texts, self.source_lang, name)
        return [found.removeprefix("warning: ")] if found else []

    @classmethod
    def open(
        cls,
        model_dir: str | Path,
        limits: Limits,
        engine: EngineConfig,
        search_options: dict[str, Any],
        thread: Executor,
    ) -> Served:
        """The model loaded in the thread that runs it (batcher.py), its compiled steps (with
        --compile) built before the first request, not during one; the search said on stderr."""
        translator = thread.submit(open_translator, model_dir, engine).result()
        thread.submit(translator.warm_up, [1, PAPER.beam]).result()
        search = translator.default_search.overridden(search_options)
        told = set(search_options) - {"shortlist"}  # the length setting and guards given
        origin = "set when the server started" if told else translator.search_origin
        print(
            f"search: beam {search.beam}, {search.length_penalty} alpha {search.alpha:g}, stop "
            f"{search.stop} ({origin})",
            file=sys.stderr,
        )
        languages = model_languages(translator)
        source = model_source_language(model_dir)
        return cls(model_dir, translator, search, origin, languages, limits, source)

    @property
    def shortlisted(self) -> bool:
        """Whether it decodes over the model's lexical shortlist (it has one, and the server
        was not started with --no-shortlist)."""
        return self.search.shortlist and getattr(self.translator, "shortlist", None) is not None

    def budgeted(self, beam: int, nbest: int) -> DecodeConfig:
        """The search within the budget: at most max_output_tokens per text, and a deadline
        max_seconds from now (checked once per output step)."""
        deadline = time.monotonic() + self.limits.max_seconds
        return self.search.replace(
            max_output_tokens=self.limits.max_output_tokens,
            beam=beam,
            nbest=nbest,
            deadline=deadline,
        )

    def translate(self, texts: list[str], beam: int, nbest: int) -> list[list[Translation]]:
        """One model call of the batcher, within the budget."""
        lines = LineTranslator(self.translator, PROTECTOR)
        return lines.nbest(texts, self.budgeted(beam, nbest))

    def steered(
        self, texts: list[str], req: TranslateRequest, controls: Controls | None
    ) -> tuple[list[list[Translation]], list[list[Alternative]]]:
        """A request with controls or alternatives, on its own (its batch mates would need
        the same controls): its n-best lists and each text's alternatives."""
        cfg = self.budgeted(req.beam, req.nbest)
        lines = LineTranslator(self.translator, req.protector())
        found = lines.nbest(texts, cfg, controls)
        alts = []
        for i, text in enumerate(texts if req.alternatives else []):
            one = (
                replace(controls, target_prefix=(controls.target_prefix[i],))
                if (controls and controls.target_prefix is not None)
                else controls
            )
            alts.append(lines.alternatives(text, req.alternatives, cfg, one))
        return found, alts

    def attention(self, text: str, found: Translation, protector: Protector | None) -> dict:
        """The last layer's cross-attention (heads' mean) over the translation found: one
        teacher-forced pass, not a second search (over the text as searched: spans out)."""
        maps = LineTranslator(self.translator, protector).attention(text, found)
        cross = maps.cross[-1].round(4).tolist()
        return {"source": maps.source, "target": maps.target_out, "cross": cross}

    def document(
        self,
        text: str | bytes,
        fmt: DocumentFormat,
        beam: int,
        tgt: str | None,
        options: DocumentOptions,
    ) -> dict:
        """A whole document, as `aiayn translate --format` gives it (a docx or odt file in
        base64), read and translated as `options` say (TranslateRequest.document_options)."""
        from aiayn.documents import translate_document

        into = for_language(self.translator, tgt, "tgt_lang")
        out, n = translate_document(into, text, fmt, self.search.replace(beam=beam), options)
        if isinstance(out, bytes):
            out = base64.b64encode(out).decode("ascii")
        return {"document": out, "sentences": n}
