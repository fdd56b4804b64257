"""toolcall-qwen: Qwen3-Coder's XML tool calls (``qwen3_coder``, ``qwen3_xml``) for vLLM.

No parser code: ``qwen3_coder.json`` holds the format as a response template, which the
``hf`` engine (toolcall-hf-response-template) reads; both names are entry points naming it.
"""

__version__ = "0.1.0"
