"""Translating with a model exported to CTranslate2 (`aiayn translate --engine ctranslate2`).

The same text pipeline as our own engine: our SentencePiece model, the over-long-line policy,
the output limit a * source length + b per sentence. CTranslate2's beam search divides the
log-probability by |Y|^alpha (our `--length-penalty power`); it has no GNMT penalty. An export
of a model with a lexical shortlist holds it as CTranslate2's vocabulary map, used unless the
search says `shortlist=False` (`--no-shortlist`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.attention_maps import Attention
from aiayn.decode.controls.alternatives import word_at
from aiayn.decode.controls.words import Controls
from aiayn.decode.translate import limit_length
from aiayn.engines.base import EMPTY, Alternative, Translation
from aiayn.layout import VMAP_FILE

UNSUPPORTED = (
    "CTranslate2 has no {} (its issues #739, #1469); our own search has: --engine aiayn "
    "(with or without --compile) or --engine onnx"
)


class CTranslate2Translator:
    """A `Translator`: CTranslate2's on a directory from `aiayn export --format ctranslate2`."""

    # Its beam search divides by |Y|^alpha: the paper's alpha on that form
    paper_search = DecodeConfig(length_penalty="power")

    def __init__(
        self,
        directory: str | Path,
        device: str = "cpu",
        threads: int = 0,
        search: DecodeConfig = paper_search,
        search_origin: str = "the paper's alpha on |Y|^alpha",
    ) -> None:
        self.default_search = search
        self.search_origin = search_origin
        try:
            import ctranslate2
        except ImportError:
            raise ValueError(
                '--engine ctranslate2 needs it: pip install -e ".[ctranslate2]"'
            ) from None
        directory = Path(directory)
        if not (directory / "model.bin").is_file():
            raise FileNotFoundError(
                f"{directory / 'model.bin'}: missing; make the directory with "
                "`aiayn export RUN --format ctranslate2 --out DIR`"
            )
        self.tokenizer = Tokenizer(directory)
        vmap = directory / VMAP_FILE
        self.shortlist = vmap if vmap.is_file() else None  # its vocabulary map, where it has one
        self.translator = ctranslate2.Translator(
            str(directory), device=device, intra_threads=threads
        )

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        """The `cfg.nbest` best translations of each line, in input order; of the controls,
        CTranslate2 takes target prefixes (natively), not glossaries or suppressed words."""
        return self._search(lines, cfg or self.default_search, self._prefixes(lines, controls))

    def _prefixes(self, lines: list[str], controls: Controls | None) -> list[list[str] | None]:
        """Each line's target prefix in pieces (None: none); other controls are refused."""
        if controls and controls.glossary:
            raise ValueError(UNSUPPORTED.format("lexically constrained search (glossary)"))
        if controls and controls.suppress:
            raise ValueError(UNSUPPORTED.format("suppressed words here"))
        if controls is None or controls.target_prefix is None:
            return [None] * len(lines)
        controls.check_lines(len(lines))
        ids = self.tokenizer.encode(list(controls.target_prefix))
        return [self.tokenizer.pieces(x) if x else None for x in ids]

    def _search(
        self,
        lines: list[str],
        cfg: DecodeConfig,
        prefixes: list[list[str] | None],
        alternatives: bool = False,
    ) -> list[list[Translation]]:
        if cfg.sample:
            raise ValueError("--sample runs on our own search only; drop --engine ctranslate2")
        if cfg.stutter_guard:
            raise ValueError(
                "CTranslate2 has no stutter guard: drop --stutter-guard (or --engine ctranslate2)"
            )
        if cfg.beam > 1 and cfg.length_penalty == "gnmt":
            raise ValueError(
                "CTranslate2's beam search has no GNMT length penalty ((5+|Y|)/6)^alpha; it "
                "divides by |Y|^alpha: choose --length-penalty power (or none)"
            )
        ids = limit_length(self.tokenizer.encode(lines), cfg.max_input_tokens, cfg.too_long)
        results: list[list[Translation]] = [[EMPTY] for _ in lines]
        by_limit: dict[int, list[int]] = defaultdict(list)  # output limit -> lines
        for i, x in enumerate(ids):
            if x:  # our limit counts eos; CTranslate2's does not
                limit = int(cfg.max_len_a * (len(x) + 1) + cfg.max_len_b)
                by_limit[min(limit, cfg.max_output_tokens or limit) - 1].append(i)
        for max_len, rows in by_limit.items():
            out = self.translator.translate_batch(
                [self.tokenizer.pieces(ids[i]) for i in rows],
                max_batch_size=cfg.max_tokens,
                batch_type="tokens",
                beam_size=cfg.beam,
                num_hypotheses=cfg.nbest,
                length_penalty=cfg.alpha if cfg.length_penalty == "power" else 0.0,
                max_input_length=0,  # the policy above has already applied
                max_decoding_length=max(max_len, 1),
                min_decoding_length=cfg.min_len,
                no_repeat_ngram_size=cfg.no_repeat_ngram,
                use_vmap=cfg.shortlist and self.shortlist is not None,
                return_scores=True,
                target_prefix=[prefixes[i] for i in rows] if any(prefixes) else None,
                return_alternatives=alternatives,
            )
            for i, result in zip(rows, out, strict=True):
                results[i] = [
                    Translation(self.tokenizer.join(hyp), score, self.tokenizer.piece_ids(hyp))
                    for hyp, score in zip(result.hypotheses, result.scores, strict=True)
                ]
        return results

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        """The best translation of each line, in input order."""
        return [hyps[0].text for hyps in self.nbest(lines, cfg, controls)]

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        """CTranslate2's own `return_alternatives`: the k best pieces after the prefix, each
        completed; kept where they make distinct words."""
        # searched over the whole output layer, as our own engine searches them
        cfg = (cfg or self.default_search).replace(nbest=1, shortlist=False)
        if not line.strip():
            return []
        prefix = self._prefixes([line], controls)
        p = len(prefix[0] or [])
        beam = max(cfg.beam, k)
        found = self._search([line], cfg.replace(beam=beam, nbest=k), prefix, alternatives=True)
        distinct: dict[str, Alternative] = {}
        for t in found[0]:
            distinct.setdefault(word_at(self.tokenizer, t.tokens, p), Alternative("", t))
        return [Alternative(word, a.translation) for word, a in distinct.items()]

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        raise ValueError("CTranslate2 does not show its attention weights; use --engine aiayn")

    def warm_up(self, beams: Iterable[int]) -> None:
        """Nothing to build: CTranslate2's kernels are compiled in its wheel."""
