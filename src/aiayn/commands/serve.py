"""`aiayn serve`: the JSON API and the web page."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from aiayn.commands.options.decoding import add_shortlist
from aiayn.commands.options.engine import (
    TUNED_OPTIONS,
    add_engine,
    add_length,
    engine_config,
    search_options,
)

LOOPBACK_NAMES = ("localhost", "ip6-localhost", "ip6-loopback")


def add(commands) -> None:
    s = commands.add_parser("serve", help="serve translations: JSON API and a web page")
    add_engine(
        s,
        "the decoder step compiled ahead of time (CPU), for beam 1 and 4 before serving "
        "(about 20 s each the first time, then loaded from disk); with --precision int8 "
        "int8 by int8, as CTranslate2 (a kernel built once per CPU, about a minute)",
    )
    add_length(s)
    add_shortlist(s)
    s.add_argument("--host", default="127.0.0.1", help="loopback by default")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--max-chars", type=int, default=1000, help="per text")
    s.add_argument("--max-texts", type=int, default=32, help="per request")
    s.add_argument("--wait-ms", type=float, default=5.0, help="batching window")
    add_network(s)
    s.set_defaults(run=run_serve)


def add_network(s: argparse.ArgumentParser) -> None:
    """What a server facing a network needs: keys, a rate limit, and the per-request budget."""
    s.add_argument(
        "--api-keys",
        type=Path,
        metavar="FILE",
        help="answer only requests with 'Authorization: Bearer KEY', KEY one of this file's "
        "lines (blank lines and # comments skipped); default: no keys",
    )
    s.add_argument(
        "--rate-limit",
        metavar="RATE",
        help='requests per API key (or client address), e.g. "60/minute"; more get 429 with '
        "Retry-After; default: no limit",
    )
    s.add_argument(
        "--max-pending",
        type=int,
        default=128,
        help="requests waiting or being translated; one more gets 503 at once",
    )
    s.add_argument(
        "--max-output-tokens",
        type=int,
        metavar="N",
        default=512,
        help="per text: a cap on the output length (the paper's input length + 50)",
    )
    s.add_argument(
        "--max-seconds",
        type=float,
        metavar="SECONDS",
        default=10.0,
        help="per request: the search stops past it and the request gets 422",
    )


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse limits no server can keep, naming the flag and the value."""
    problems = [
        f"{flag} {value:g}: give 1 or more"
        for flag, value in (
            ("--max-chars", args.max_chars),
            ("--max-texts", args.max_texts),
            ("--max-pending", args.max_pending),
            ("--max-output-tokens", args.max_output_tokens),
        )
        if value < 1
    ]
    if not args.max_seconds > 0:
        problems.append(f"--max-seconds {args.max_seconds:g}: give a positive number")
    if args.wait_ms < 0:
        problems.append(f"--wait-ms {args.wait_ms:g}: give 0 or more")
    if problems:
        raise ValueError("; ".join(problems))


def exposure_warning(host: str, keyed: bool) -> str | None:
    """A loud warning for a server that anyone on a network can use: not on loopback, no keys."""
    if keyed or is_loopback(host):
        return None
    bar = "!" * 78
    return (
        f"{bar}\nWARNING: serving on {host}, beyond this machine, WITHOUT API KEYS: anyone who "
        "can reach\nthis port can use the model. Give --api-keys FILE (and --rate-limit), or "
        f"serve on 127.0.0.1.\n{bar}"
    )


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def run_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from aiayn.serve.app import Limits, create_app
        from aiayn.serve.keys import read_keys
        from aiayn.serve.rate import check_rate
    except ImportError:
        raise ValueError('serving needs FastAPI and uvicorn: pip install -e ".[serve]"') from None
    check_numbers(args)
    rate = check_rate(args.rate_limit) if args.rate_limit is not None else ""
    keys = read_keys(args.api_keys) if args.api_keys is not None else frozenset()
    limits = Limits(
        max_chars=args.max_chars,
        max_texts=args.max_texts,
        max_output_tokens=args.max_output_tokens,
        max_seconds=args.max_seconds,
        max_pending=args.max_pending,
        rate=rate,
    )
    given = search_options(args, only=TUNED_OPTIONS)  # the limits are the server's own
    given |= {} if args.shortlist else {"shortlist": False}  # --no-shortlist, to compare
    app = create_app(args.model, limits, args.wait_ms, engine_config(args), given, keys)
    print(
        f"API keys: {len(keys) or 'none'}; rate limit: {rate or 'none'}; budget per request: "
        f"{limits.max_seconds:g} s, {limits.max_output_tokens} output tokens per text; at most "
        f"{limits.max_pending} requests waiting",
        file=sys.stderr,
    )
    if warning := exposure_warning(args.host, bool(keys)):
        print(warning, file=sys.stderr)  # last before the server's own lines: seen
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
