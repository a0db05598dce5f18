"""Judging and choosing outputs: scores against references, a split evaluated, the scores per
direction of a multilingual model, which language a text is in, and the length setting chosen
on validation (`evaluate/tune.py`, stored with the model by `tuned.py`)."""
