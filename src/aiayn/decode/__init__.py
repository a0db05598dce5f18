"""Decoding: turning a trained model and source sentences into translations.

Every search follows the rules of `steps` (the length limit, the minimum length); greedy
decoding and sampling share its token-by-token loop, beam search keeps K hypotheses instead.
The settings of all of them are one `aiayn.config.DecodeConfig`. `precision` makes a model
bf16 or int8; `compiled.CompiledModel` runs its decoder step compiled ahead of time, behind the
interface the searches use.
"""
