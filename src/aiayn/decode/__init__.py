"""Decoding: turning a trained model and source sentences into translations."""

# Named here, in a module that imports nothing, so the command line can offer them cheaply.
STOP_RULES = ("bound", "k-finished")  # beam search: the paper's (tensor2tensor's), fairseq's
DECODE_PRECISIONS = ("fp32", "bf16", "int8")  # int8: dynamic int8 linear layers, CPU only
