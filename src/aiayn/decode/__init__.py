"""Decoding: turning a trained model and source sentences into translations.

Every search follows the rules of `rules` (the length limit, the minimum length); greedy
decoding and sampling share the loop of `token_by_token`, beam search keeps K hypotheses
instead. The settings of all of them are one `aiayn.config.DecodeConfig`. The searches drive any
`protocols.DecodingModel`: the `Transformer`, `compiled.CompiledModel` (its decoder step
compiled ahead of time) or an exported model. `precision` makes a model bf16 or int8;
`translate` is text in, text out; `attention_maps` reads what the model attends to.
"""
