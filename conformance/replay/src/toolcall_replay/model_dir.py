"""Model directories without weights, for ``vllm serve DIR`` with the replay engine.

vLLM's front end needs a config of an architecture it registers, a generation config (its eos list
becomes the request's eos and stop ids) and the tokenizer with a chat template. It never looks for
weights, because the replay engine has no executor. The tokenizer is the real one
(``toolcall_conformance.tokenizers``), built offline; the config has the real vocabulary size and
tiny layer sizes.

``build_model_dir("qwen2.5", dest)`` (hermes), ``build_model_dir("llama3.1", dest)`` (hermes on
Hermes 3 / Llama 3.1, llama3_json), ``build_model_dir("llama4", dest)`` (llama4_json,
llama4_pythonic), ``build_model_dir("glm4.5", dest)`` (glm45/glm47) and
``build_model_dir("mistral-tekken-v11", dest)`` (mistral) build once and are reused while the
inputs are unchanged. A Mistral directory holds mistral-common's ``tekken.json`` instead of a
Hugging Face tokenizer and chat template: serve it with ``--tokenizer-mode mistral``, as vLLM
serves Mistral's own checkpoints (mistral-common renders the prompt).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from toolcall_conformance.tokenizers import get_tokenizer

BUILDER_VERSION = 1
_STAMP_FILE = "toolcall-replay.json"

# transformers 5 warns about a bogus "incorrect regex pattern" for local directories whose
# config carries no transformers_version (or one from 5.x).
_TRANSFORMERS_VERSION = "4.43.1"


@dataclass(frozen=True)
class ModelFamily:
    name: str
    tokenizer: str  # a toolcall_conformance.tokenizers name
    template: str  # file in toolcall_replay/templates ("": a mistral-common tekken.json)
    config: Mapping[str, Any]
    eos_token_ids: tuple[int, ...]  # generation_config.json; the first is the primary eos


FAMILIES: dict[str, ModelFamily] = {
    "qwen2.5": ModelFamily(
        name="qwen2.5",
        tokenizer="qwen2.5",
        template="qwen2.5.jinja",
        config={
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "vocab_size": 151936,  # Qwen2.5-7B-Instruct
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 32768,
            "max_window_layers": 1,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "use_sliding_window": False,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "bos_token_id": 151643,
            "eos_token_id": 151645,
        },
        eos_token_ids=(151645, 151643),
    ),
    "llama3.1": ModelFamily(
        name="llama3.1",
        tokenizer="llama3.1",
        template="llama3.1.jinja",
        config={
            "architectures": ["LlamaForCausalLM"],  # Llama 3.1 8B; Hermes 3 is a fine-tune
            "model_type": "llama",
            "vocab_size": 128256,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000.0,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "bos_token_id": 128000,
            "eos_token_id": [128001, 128008, 128009],
        },
        # The tokenizer's eos (<|eot_id|>) first, then the rest of Llama 3.1 Instruct's
        # generation_config eos list.
        eos_token_ids=(128009, 128001, 128008),
    ),
    "llama4": ModelFamily(
        name="llama4",
        tokenizer="llama4",
        template="llama4.jinja",
        config={
            # A stand-in: Llama 4 Scout/Maverick are Llama4ForConditionalGeneration (text and
            # vision); the replay engine runs no model, and a text config of a registered
            # architecture with Llama 4's vocabulary serves the real tokenizer as well.
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "vocab_size": 202048,  # text_config.vocab_size of Llama-4-Scout-17B-16E-Instruct
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000.0,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "bos_token_id": 200000,
            "eos_token_id": [200001, 200007, 200008],
        },
        # The tokenizer's eos (<|eot|>) first, then <|eom|> and <|end_of_text|>.
        eos_token_ids=(200008, 200007, 200001),
    ),
    "glm4.5": ModelFamily(
        name="glm4.5",
        tokenizer="glm4.5",
        template="glm4.5.jinja",
        config={
            "architectures": ["Glm4MoeForCausalLM"],  # GLM-4.5 / 4.5-Air / 4.6 / 4.7
            "model_type": "glm4_moe",
            "vocab_size": 151552,
            "hidden_size": 64,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "num_hidden_layers": 1,
            "first_k_dense_replace": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "partial_rotary_factor": 0.5,
            "n_routed_experts": 4,
            "n_shared_experts": 1,
            "num_experts_per_tok": 2,
            "n_group": 1,
            "topk_group": 1,
            "norm_topk_prob": True,
            "routed_scaling_factor": 1.0,
            "num_nextn_predict_layers": 0,
            "use_qk_norm": False,
            "attention_bias": True,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "pad_token_id": 151329,
            "eos_token_id": [151329, 151336, 151338],
        },
        eos_token_ids=(151329, 151336, 151338),
    ),
    "deepseek-v3": ModelFamily(
        name="deepseek-v3",
        tokenizer="deepseek-v3",
        template="deepseek-v3.jinja",
        config={
            # A stand-in, as for Llama 4: DeepSeek-V3 is DeepseekV3ForCausalLM (MLA, MoE); the
            # replay engine runs no model, and a registered text architecture with DeepSeek's
            # vocabulary serves the real tokenizer as well.
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "vocab_size": 129280,  # deepseek-ai/DeepSeek-V3 config.json
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 163840,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000.0,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "bos_token_id": 0,
            "eos_token_id": 1,
        },
        eos_token_ids=(1,),  # end of sentence
    ),
    "mistral-tekken-v11": ModelFamily(
        name="mistral-tekken-v11",
        tokenizer="mistral-tekken-v11",
        template="",
        config={
            "architectures": ["MistralForCausalLM"],  # Mistral-Small-3.2's text model
            "model_type": "mistral",
            "vocab_size": 131072,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000000.0,
            "sliding_window": None,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "bos_token_id": 1,
            "eos_token_id": 2,
        },
        eos_token_ids=(2,),
    ),
}

# Qwen3-Coder (qwen3_coder, qwen3_xml): the Qwen3 tokenizer (Qwen2.5's vocabulary and
# Qwen3's added tokens) on Qwen2.5's stand-in text config of the same vocabulary size, with
# its chat template: the replay engine runs no model, and the generation prompt
# (<|im_start|>assistant\n) is the one Qwen3-Coder's template writes.
FAMILIES["qwen3"] = ModelFamily(
    name="qwen3",
    tokenizer="qwen3",
    template="qwen2.5.jinja",
    config=FAMILIES["qwen2.5"].config,
    eos_token_ids=(151645, 151643),
)


class ModelDirError(RuntimeError):
    pass


def template_text(family: str) -> str:
    if not _family(family).template:
        raise ModelDirError(f"{family}: mistral-common renders its prompts, there is no template")
    return (resources.files("toolcall_replay") / "templates" / _family(family).template).read_text(
        encoding="utf-8"
    )


def _family(name: str) -> ModelFamily:
    try:
        return FAMILIES[name]
    except KeyError:
        known = ", ".join(sorted(FAMILIES))
        raise ModelDirError(f"no replay model family {name!r} (known: {known})") from None


def default_model_root() -> Path:
    env = os.environ.get("TOOLCALL_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "toolcall"
    return root / "replay-models"


def _tokenizer_json(fam: ModelFamily, tokenizer: Any) -> Path:
    """The tokenizer file copied into the directory: tokenizer.json, or tekken.json."""
    if not fam.template:
        return Path(tokenizer.hf_tokenizer.instruct_tokenizer.tokenizer.file_path)
    path: Path | None = tokenizer.tokenizer_json_path
    if path is None:
        raise ModelDirError(f"tokenizer {fam.tokenizer!r} has no tokenizer.json")
    return path


def _tokenizer_file_name(fam: ModelFamily) -> str:
    return "tokenizer.json" if fam.template else "tekken.json"


def _files(
    fam: ModelFamily, tokenizer: Any, extra: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Every file of the directory except the tokenizer file (copied), as text; ``extra``
    adds keys to tokenizer_config.json."""
    config = {**fam.config, "transformers_version": _TRANSFORMERS_VERSION}
    generation = {
        "eos_token_id": list(fam.eos_token_ids),
        "transformers_version": _TRANSFORMERS_VERSION,
    }
    if not fam.template:
        if tokenizer.stop_token_ids[0] != fam.eos_token_ids[0]:
            raise ModelDirError(f"{fam.name}: the tokenizer's eos is not {fam.eos_token_ids[0]}")
        if extra:
            raise ModelDirError(f"{fam.name}: a mistral-common tokenizer has no tokenizer_config")
        return {
            "config.json": json.dumps(config, indent=2),
            "generation_config.json": json.dumps(generation, indent=2),
        }
    json_path = _tokenizer_json(fam, tokenizer)
    source_config = json.loads((json_path.parent / "tokenizer_config.json").read_text("utf-8"))
    source_config.pop("toolcall_build", None)
    tokenizer_config = {
        **source_config,
        "model_max_length": fam.config["max_position_embeddings"],
        "clean_up_tokenization_spaces": False,
        "chat_template": template_text(fam.name),
        **(extra or {}),
    }
    vocab = tokenizer.special_tokens
    eos_text = tokenizer_config.get("eos_token")
    if vocab.get(eos_text) != fam.eos_token_ids[0]:
        raise ModelDirError(
            f"{fam.name}: the tokenizer's eos {eos_text!r} is {vocab.get(eos_text)}, "
            f"but generation_config.json names {fam.eos_token_ids[0]} first"
        )
    return {
        "config.json": json.dumps(config, indent=2),
        "generation_config.json": json.dumps(generation, indent=2),
        "tokenizer_config.json": json.dumps(tokenizer_config, indent=2, ensure_ascii=False),
    }


def _digest(files: Mapping[str, str], tokenizer_json: Path) -> str:
    h = hashlib.sha256(f"builder {BUILDER_VERSION}\n".encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    with tokenizer_json.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(directory: Path) -> str | None:
    try:
        return str(json.loads((directory / _STAMP_FILE).read_text("utf-8"))["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build_model_dir(
    family: str,
    dest: Path | None = None,
    *,
    tokenizer_config: Mapping[str, Any] | None = None,
) -> Path:
    """Build (or reuse) the weightless model directory of ``family`` at ``dest``.

    ``dest`` defaults to ``$TOOLCALL_CACHE/replay-models/<family>``. The directory is rebuilt when
    its inputs (tokenizer, template, configs) change; a finished directory is never half-written.
    ``tokenizer_config`` adds keys to ``tokenizer_config.json`` (such as a ``response_template``);
    the default directory is then ``<family>-<a digest of them>``.
    """
    fam = _family(family)
    if dest is None:
        name = fam.name
        if tokenizer_config:
            key = json.dumps(tokenizer_config, sort_keys=True).encode()
            name = f"{fam.name}-{hashlib.sha256(key).hexdigest()[:12]}"
        dest = default_model_root() / name
    dest = dest.expanduser()
    tokenizer = get_tokenizer(fam.tokenizer)
    files = _files(fam, tokenizer, tokenizer_config)
    tokenizer_json = _tokenizer_json(fam, tokenizer)
    digest = _digest(files, tokenizer_json)
    if _stamp(dest) == digest:
        return dest

    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for name, text in files.items():
            (scratch / name).write_text(text, encoding="utf-8")
        shutil.copyfile(tokenizer_json, scratch / _tokenizer_file_name(fam))
        stamp = {"family": fam.name, "tokenizer": fam.tokenizer, "digest": digest}
        (scratch / _STAMP_FILE).write_text(json.dumps(stamp, indent=2), encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        try:
            os.replace(scratch, dest)
        except OSError:
            if _stamp(dest) != digest:  # not another process finishing the same build
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return dest
