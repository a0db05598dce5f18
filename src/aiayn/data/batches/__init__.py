"""What training reads from a data directory: memory-mapped ids into token-budget batches,
directions drawn by temperature, cased copies, reference alignments."""
