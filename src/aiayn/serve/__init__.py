"""Serving: a JSON API and a web page, with concurrent requests batched together."""
