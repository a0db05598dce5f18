"""`aiayn serve`: the JSON API and the web page."""

from __future__ import annotations

import argparse

from aiayn.commands.translate import add_engine, add_length, engine_config, search_options


def add(commands) -> None:
    s = commands.add_parser("serve", help="serve translations: JSON API and a web page")
    add_engine(
        s,
        "the decoder step compiled ahead of time (CPU), for beam 1 and 4 before serving "
        "(about 20 s each the first time, then loaded from disk); with --precision int8 the "
        "weights are int8 and the activations bf16",
    )
    add_length(s)
    s.add_argument("--host", default="127.0.0.1", help="loopback by default")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--max-chars", type=int, default=1000, help="per text")
    s.add_argument("--max-texts", type=int, default=32, help="per request")
    s.add_argument("--wait-ms", type=float, default=5.0, help="batching window")
    s.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from aiayn.serve.app import Limits, create_app
    except ImportError:
        raise ValueError('serving needs FastAPI and uvicorn: pip install -e ".[serve]"') from None
    limits = Limits(max_chars=args.max_chars, max_texts=args.max_texts)
    given = search_options(args)
    app = create_app(args.model, limits, args.wait_ms, engine_config(args), given)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
