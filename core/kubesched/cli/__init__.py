"""The ``kubesched`` command line: one module per command group, ``main`` dispatches."""

from kubesched.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
