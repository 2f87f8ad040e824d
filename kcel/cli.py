"""The `kcel` command: parse (and, as the engine grows, evaluate and validate) CEL."""

from __future__ import annotations

import argparse
import sys

from kcel.errors import CompileError
from kcel.parser import parse
from kcel.parser.unparser import dump, unparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kcel", description="CEL as the Kubernetes API server runs it.")
    commands = parser.add_subparsers(dest="command", required=True)
    parse_cmd = commands.add_parser("parse", help="parse an expression and print it back (or its AST)")
    parse_cmd.add_argument("expression")
    parse_cmd.add_argument("--dump", action="store_true", help="print the AST with node ids")
    args = parser.parse_args(argv)

    try:
        parsed = parse(args.expression)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    print(dump(parsed) if args.dump else unparse(parsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
