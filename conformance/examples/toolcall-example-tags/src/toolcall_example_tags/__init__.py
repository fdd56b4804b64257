"""toolcall-example-tags: the ``example_tags`` format, ``<call name="NAME">{json}</call>``."""

from __future__ import annotations

from toolcall_example_tags.parser import ExampleTagsParser

__version__ = "0.1.0"

__all__ = ["ExampleTagsParser", "__version__"]
