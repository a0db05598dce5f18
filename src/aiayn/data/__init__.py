"""Data: reading and cleaning corpora, splitting, the joint vocabulary, binarized ids, batches."""
