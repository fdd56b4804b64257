"""``toolcall derive CHAT_TEMPLATE``: the response template derived from a chat template."""

from __future__ import annotations

import argparse
import json
import sys

from toolcall.hookspecs import Subparsers
from toolcall_hf_response_template.derive import Refusal, derive, read_chat_template

__all__ = ["add_derive"]

#: Exit status of a refusal (and of a file that cannot be read).
EXIT_REFUSED = 2


def add_derive(subparsers: Subparsers) -> None:
    command = subparsers.add_parser(
        "derive",
        help="derive a response template (the hf engine's format) from a chat template",
        description=(
            "Render probe tool calls through a model's chat template, compare the "
            "renderings and print the response template they show, with the renderings, "
            "as JSON; or print why not on stderr and exit with status 2."
        ),
    )
    command.add_argument(
        "chat_template",
        metavar="CHAT_TEMPLATE",
        help="a Jinja file, a tokenizer_config.json with chat_template, or a model directory",
    )
    command.add_argument(
        "--no-renderings", action="store_true", help="print the template without the renderings"
    )
    command.set_defaults(func=_derive)


def _derive(args: argparse.Namespace) -> int:
    try:
        text, tokens = read_chat_template(args.chat_template)
    except ValueError as error:
        print(f"toolcall derive: {error}", file=sys.stderr)
        return EXIT_REFUSED
    result = derive(text, tokens)
    if isinstance(result, Refusal):
        print(f"toolcall derive: {args.chat_template}: refused: {result}", file=sys.stderr)
        return EXIT_REFUSED
    data = result.to_json()
    if args.no_renderings:
        del data["renderings"]
    print(json.dumps(data, ensure_ascii=False, indent=2))
    return 0
