"""`aiayn prepare` for one language pair: read a corpus (the Bible, a TSV, two files), clean it,
split it without leakage, learn the joint BPE vocabulary and binarize; `pipeline.py` runs it."""
