"""Documents, not lists of sentences: plain text, Markdown and HTML translated with their
structure and inline markup kept (`aiayn translate --format`), and word alignments read from
cross-attention (`aiayn translate --alignments`)."""

from aiayn.documents.translate import FORMATS, DocumentOptions, translate_document

__all__ = ["FORMATS", "DocumentOptions", "translate_document"]
