"""Data: text in, token ids out, batches for training.

Here, what every stage shares: reading corpora and input (`sources.py`), cleaning rules,
casing and case markup, language tags, the `Tokenizer`, ids on disk (`token_ids.py`) and an
opened data directory (`data_dir.py`). Below, the stages: `prepare/` (one language pair),
`multilingual/` (many, built on `prepare/`'s parts) and `batches/` (what training reads).
"""
