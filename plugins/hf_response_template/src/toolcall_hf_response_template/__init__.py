"""toolcall-hf-response-template: the ``hf`` parser, whose format is the checkpoint's
``response_template``."""

from __future__ import annotations

from toolcall_hf_response_template.parser import ENV, HfParser, template_for
from toolcall_hf_response_template.template import Template, TemplateError, load_template

__version__ = "0.1.0"

__all__ = [
    "ENV",
    "HfParser",
    "Template",
    "TemplateError",
    "__version__",
    "load_template",
    "template_for",
]
