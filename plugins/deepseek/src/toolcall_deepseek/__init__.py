"""DeepSeek's tool-call formats as response templates, served by the ``hf`` engine.

No parser code: ``deepseek_v3.json`` (DeepSeek-V3-0324, R1-0528) and ``deepseek_v31.json``
(DeepSeek-V3.1) are read by toolcall-hf-response-template through the ``toolcall`` entry
points of this distribution.
"""

__version__ = "0.1.0"
