"""Check the recorded cases' token ids against the model itself.

``transformers serve`` streams text without token ids, so the recorder re-encoded each
output with SmolLM2's real tokenizer (the one inside the GGUF). This script regenerates every
output with the same weights, chat template and greedy decoding, directly with
``model.generate``, and compares the generated ids with the case's ids (the EOS that ended
generation is not part of a case).

    python check_ids.py MODEL_DIR [CASE_DIR]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main() -> int:
    model_dir = sys.argv[1]
    case_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    mismatches = 0
    for path in sorted(case_dir.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        recording = case["extra"]["recording"]
        inputs = tokenizer.apply_chat_template(
            recording["messages"],
            tools=case["request"]["tools"] or None,
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        started = time.perf_counter()
        output = model.generate(
            **inputs, max_new_tokens=recording["sent"]["max_tokens"], do_sample=False
        )
        seconds = time.perf_counter() - started
        generated = output[0, inputs["input_ids"].shape[1] :].tolist()
        if generated and generated[-1] == tokenizer.eos_token_id:
            generated = generated[:-1]
        recorded = [i for step in case["output"]["steps"] for i in step["token_ids"]]
        same = generated == recorded
        mismatches += not same
        print(
            f"{path.name}: {'same ids' if same else 'DIFFERENT ids'} "
            f"({len(recorded)} recorded, {len(generated)} generated, "
            f"{len(generated) / seconds:.1f} tokens/s)"
        )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
