"""The tool parsers built into vLLM 0.33.0, by ``--tool-call-parser`` name.

Kept here (without importing vLLM) so that ``toolcall list`` can say which
built-in a plugin replaces. A test compares it with
``ToolParserManager.list_registered()`` whenever vLLM is installed.
"""

from __future__ import annotations

__all__ = ["VLLM_BUILTIN_TOOL_PARSERS", "VLLM_VERSION"]

#: The vLLM release this list was read from.
VLLM_VERSION = "0.33.0"

VLLM_BUILTIN_TOOL_PARSERS: frozenset[str] = frozenset(
    {
        "apertus",
        "beam",
        "cohere_command3",
        "cohere_command4",
        "deepseek_v3",
        "deepseek_v31",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_v41",
        "dots",
        "ernie45",
        "functiongemma",
        "gemma4",
        "gigachat3",
        "glm45",
        "glm47",
        "granite",
        "granite-20b-fc",
        "granite4",
        "hermes",
        "hf",
        "hunyuan_a13b",
        "hy_v3",
        "hy_v4",
        "inkling",
        "internlm",
        "jamba",
        "k2_horizon",
        "kimi_k2",
        "kimi_k3",
        "lfm2",
        "ling3",
        "llama3_json",
        "llama4_json",
        "llama4_pythonic",
        "longcat",
        "mimo",
        "minicpm5",
        "minimax_m2",
        "minimax_m3",
        "mistral",
        "muse",
        "muse_glimmer",
        "musespark1x",
        "olmo3",
        "openai",
        "phi4_mini_json",
        "plamo3",
        "poolside_v1",
        "pythonic",
        "qwen3_coder",
        "qwen3_json",
        "qwen3_xml",
        "seed_oss",
        "step3",
        "step3p5",
        "step5",
        "xlam",
    }
)
