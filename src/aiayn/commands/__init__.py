"""The `aiayn` subcommands, one module each: its arguments and what it runs."""
