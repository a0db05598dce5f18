"""Documents, not lists of sentences: plain text, Markdown, HTML, Word (docx) and OpenDocument
(odt) translated with their structure and inline markup kept (`aiayn translate --format`), and
word alignments read from cross-attention (`aiayn translate --alignments`)."""

from aiayn.documents.translate import BINARY, FORMATS, DocumentOptions, translate_document

__all__ = ["BINARY", "FORMATS", "DocumentOptions", "translate_document"]
