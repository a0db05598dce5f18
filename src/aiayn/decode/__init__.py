"""Decoding: turning a trained model and source sentences into translations."""
