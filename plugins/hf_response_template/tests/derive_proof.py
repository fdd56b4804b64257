"""The proof table of the README ("Derived from a chat template"): derive each chat
template, run the family's corpus through the derived parser, count the cases whose
calls equal the case's expected calls.

    python tests/derive_proof.py [VLLM_EXAMPLES_DIR]   # default: /work/vllm-src/sdist/examples

and the replay package's templates (conformance/replay/src/toolcall_replay/templates/, written
for it in each family's shape), rows ``replay/NAME``.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from toolcall import ParserContext, Request
from toolcall_hf_response_template.derive import Derived, derive, read_chat_template
from toolcall_hf_response_template.parser import template_parser

_ENGINE = "toolcall_hf_response_template"

#: The shipped template of the same format, for comparison: (package, resource), the engine's
#: own or a data family's.
SHIPPED: dict[str, tuple[str, str]] = {
    "hermes": (_ENGINE, "templates/hermes.json"),
    "qwen3coder": ("toolcall_qwen", "qwen3_coder.json"),
    "deepseekv3": ("toolcall_deepseek", "deepseek_v3.json"),
    "deepseekv31": ("toolcall_deepseek", "deepseek_v31.json"),
    "xlam_llama": ("toolcall_xlam", "xlam.json"),
    "xlam_qwen": ("toolcall_xlam", "xlam.json"),
    "llama3.1_json": (_ENGINE, "templates/llama3_json.json"),
    "llama3.2_json": (_ENGINE, "templates/llama3_json.json"),
    "mistral": (_ENGINE, "templates/mistral.json"),
    "mistral3": (_ENGINE, "templates/mistral.json"),
    "mistral_parallel": (_ENGINE, "templates/mistral.json"),
    "qwen2.5": (_ENGINE, "templates/hermes.json"),
    "llama3.1": (_ENGINE, "templates/hermes.json"),
    "glm4.5": (_ENGINE, "templates/glm.json"),
    "deepseek-v3": ("toolcall_deepseek", "deepseek_v31.json"),
}
#: vLLM 0.33's example template -> the corpora (cases/<name>/) of its format.
FAMILIES: dict[str, tuple[str, ...]] = {
    "hermes": ("hermes", "hf/qwen2.5:json"),
    "qwen3coder": ("qwen3_coder", "hf/qwen2.5:xml-inline"),
    "deepseekv3": ("deepseek_v3",),
    "deepseekv31": ("deepseek_v31",),
    "xlam_llama": ("xlam/llama3.1",),
    "xlam_qwen": ("xlam/qwen2.5",),
    "llama3.1_json": ("llama3_json",),
    "llama3.2_json": ("llama3_json",),
    "llama4_json": ("llama4_json",),
    "mistral": ("mistral/mistral-v3", "mistral/mistral-tekken"),
    "mistral_parallel": ("mistral/mistral-v3", "mistral/mistral-tekken"),
    "mistral3": ("mistral/mistral-v3", "mistral/mistral-tekken"),
    "glm4": ("glm45", "glm47"),
    "llama3.2_pythonic": ("pythonic",),
    "llama4_pythonic": ("llama4_pythonic",),
    # The replay package's templates, written in each family's shape.
    "qwen2.5": ("hermes", "hf/qwen2.5:json"),
    "llama3.1": ("hermes",),
    "llama4": ("llama4_pythonic",),
    "glm4.5": ("glm45", "glm47"),
    "deepseek-v3": ("deepseek_v31",),  # V3.1's shape (its bare JSON), whatever its file name
}


def cases(corpus: str) -> list[dict[str, Any]]:
    """The cases of ``corpus`` (a folder under cases/); ``hf/...:KIND``: the hf cases whose
    template's tool calls are of that content kind."""
    corpus, _, kind = corpus.partition(":")
    root = resources.files("toolcall_conformance").joinpath("cases")
    folder = Path(str(root)) / corpus
    found = [json.loads(p.read_text("utf-8")) for p in sorted(folder.rglob("*.json"))]
    if kind:
        found = [
            case
            for case in found
            if case["response_template"]["template"]["fields"]["tool_calls"]["content"] == kind
        ]
    return found


def calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"]["arguments"])
        except json.JSONDecodeError:
            arguments = call["function"]["arguments"]
        out.append((call["function"]["name"], arguments))
    return out


def shipped(where: tuple[str, str]) -> dict[str, Any]:
    package, resource = where
    data: dict[str, Any] = json.loads(resources.files(package).joinpath(resource).read_text())
    # A data family's resource wraps the template; the engine's files are the template.
    template: dict[str, Any] = data.get("response_template", data)
    return template


def agreeing(template: dict[str, Any], corpus: list[dict[str, Any]]) -> int:
    parser_class = template_parser("derived", {"response_template": template})
    count = 0
    for case in corpus:
        text = "".join(step["text"] for step in case["output"]["steps"])
        context = ParserContext(request=Request.from_openai(case.get("request") or {}))
        got = calls_of(parser_class(context).parse(text).to_openai())
        want = [(c["name"], c["arguments"]) for c in case["expected"].get("tool_calls") or []]
        count += got == want
    return count


REPLAY = Path(__file__).parents[3] / "conformance" / "replay" / "src" / "toolcall_replay"


def main(examples: Path) -> None:
    print("| template | derived | cases agreeing / total | with the shipped template |")
    print("| --- | --- | ---: | ---: |")
    paths = sorted(examples.glob("tool_chat_template_*.jinja"))
    paths += sorted((REPLAY / "templates").glob("*.jinja"))
    for path in paths:
        name = path.stem.removeprefix("tool_chat_template_")
        text, tokens = read_chat_template(str(path))
        result = derive(text, tokens)
        corpora = FAMILIES.get(name, ())
        corpus = [case for c in corpora for case in cases(c)]
        theirs = ""
        if corpus and name in SHIPPED:
            package, resource = SHIPPED[name]
            label = f"{package.removeprefix('toolcall_')}/{Path(resource).stem}"
            theirs = f"{agreeing(shipped(SHIPPED[name]), corpus)} (`{label}`)"
        if isinstance(result, Derived):
            what = result.encoding
            if corpus:
                score = (
                    f"{agreeing(result.template, corpus)} / {len(corpus)} ({', '.join(corpora)})"
                )
            else:
                score = "no corpus"
        else:
            what = f"no: {result}"
            score = "n/a"
        cell = what.replace("|", "\\|")
        label = name if path.parent.name == examples.name else f"replay/{name}"
        print(f"| `{label}` | {cell} | {score} | {theirs} |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/vllm-src/sdist/examples"))
