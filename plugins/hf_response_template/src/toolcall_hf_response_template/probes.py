"""The probe conversations :mod:`derive` renders through a chat template, and the
renderer: Jinja2 configured as transformers renders chat templates."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

__all__ = [
    "ALPHA",
    "BETA",
    "REASON",
    "TEXT",
    "TOOLS",
    "USER",
    "VALUES",
    "Call",
    "RenderError",
    "Renderer",
    "tojson",
]

ALPHA: Final = "probe_alpha"
BETA: Final = "probe_beta"
TEXT: Final = "Probe text of the answer."
REASON: Final = "Probe reasoning text."
USER: Final = "Probe question."
#: Argument values of each JSON type; the string has a blank and no markup.
VALUES: Final[Mapping[str, Any]] = {
    "string": "probe value",
    "integer": 42,
    "number": 2.5,
    "boolean": True,
    "null": None,
    "array": [1, 2],
    "object": {"inner": "deep"},
}


def _tool(name: str) -> dict[str, Any]:
    properties: dict[str, Any] = {f"k_{kind}": {"type": kind} for kind in VALUES}
    # Templates that describe a schema recursively need an array's items and an object's
    # properties.
    properties["k_array"]["items"] = {"type": "integer"}
    properties["k_object"]["properties"] = {"inner": {"type": "string"}}
    # A type "null" sends some templates' schema printers into endless recursion.
    properties["k_null"] = {"description": "any value"}
    properties["k_first"] = {"type": "string"}
    properties["k_second"] = {"type": "string"}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The probe tool {name}.",
            "parameters": {"type": "object", "properties": properties},
        },
    }


TOOLS: Final = (_tool(ALPHA), _tool(BETA))


class RenderError(Exception):
    """The template raised, or did not render."""


def tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """transformers' ``tojson`` filter (unlike Jinja's, no HTML escaping)."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise(message: str) -> None:
    raise RenderError(message)


def _strftime_now(fmt: str) -> str:
    # A fixed date: the derivation must not depend on the day it runs.
    return datetime(2026, 1, 1).strftime(fmt)


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: Mapping[str, Any]
    id: str

    def openai(self, *, as_string: bool) -> dict[str, Any]:
        arguments: Any = (
            json.dumps(self.arguments, ensure_ascii=False) if as_string else dict(self.arguments)
        )
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


class Renderer:
    """One chat template, compiled once, rendered as transformers renders it."""

    def __init__(self, chat_template: str, special_tokens: Mapping[str, str] | None = None) -> None:
        from jinja2 import TemplateError  # noqa: PLC0415
        from jinja2.ext import loopcontrols  # noqa: PLC0415
        from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: PLC0415

        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
        )
        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = _strftime_now
        self._error = TemplateError
        try:
            self._template = env.from_string(chat_template)
        except TemplateError as error:
            raise RenderError(f"the chat template does not compile: {error}") from None
        self._tokens = {
            "bos_token": "",
            "eos_token": "",
            "pad_token": "",
            "unk_token": "",
            **dict(special_tokens or {}),
        }

    def render(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool) -> str:
        try:
            return self._template.render(
                messages=list(messages),
                tools=[dict(tool) for tool in TOOLS],
                add_generation_prompt=add_generation_prompt,
                **self._tokens,
            )
        except RenderError:
            raise
        except Exception as error:
            raise RenderError(f"{type(error).__name__}: {error}") from None

    @staticmethod
    def user() -> dict[str, Any]:
        return {"role": "user", "content": USER}

    @staticmethod
    def assistant(
        content: str | None,
        calls: Sequence[Call] = (),
        *,
        as_string: bool = False,
        reasoning: str | None = None,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [call.openai(as_string=as_string) for call in calls]
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return message


# -- where a chat template comes from -----------------------------------------------


def read_chat_template(path: str) -> tuple[str, dict[str, str]]:
    """The chat template and special tokens at ``path``: a Jinja file, a
    ``tokenizer_config.json`` with ``chat_template``, or a model directory holding either
    (``chat_template.jinja``, ``tokenizer_config.json``); raises ``ValueError``."""
    if os.path.isdir(path):
        for name in ("chat_template.jinja", "tokenizer_config.json", "chat_template.json"):
            candidate = os.path.join(path, name)
            if os.path.isfile(candidate):
                text, tokens = read_chat_template(candidate)
                if name == "chat_template.jinja":
                    config = os.path.join(path, "tokenizer_config.json")
                    if os.path.isfile(config):
                        tokens = _tokens_of(_read_json(config))
                return text, tokens
        raise ValueError(f"{path}: no chat_template.jinja or tokenizer_config.json")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error}") from None
    try:
        return chat_template_of_text(text)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def chat_template_of_text(text: str) -> tuple[str, dict[str, str]]:
    """The chat template and special tokens of ``text``: a Jinja template, or the JSON
    of a ``tokenizer_config.json`` (or ``chat_template.json``) carrying one."""
    if not text.lstrip().startswith("{") or text.lstrip().startswith(("{%", "{{", "{#")):
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text, {}
    if not isinstance(data, dict):
        raise ValueError("a JSON value that is no tokenizer config")
    template = data.get("chat_template")
    if isinstance(template, list):  # named templates: the default one, or the tool one
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
        template = named.get("tool_use") or named.get("default")
    if not isinstance(template, str):
        raise ValueError("the JSON has no chat_template string")
    return template, _tokens_of(data)


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data


def _tokens_of(config: Mapping[str, Any]) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for key in ("bos_token", "eos_token", "pad_token", "unk_token"):
        value = config.get(key)
        if isinstance(value, Mapping):
            value = value.get("content")
        if isinstance(value, str):
            tokens[key] = value
    return tokens


def loads_or_text(text: str) -> Any:
    """``text`` read as JSON, else ``text`` itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
