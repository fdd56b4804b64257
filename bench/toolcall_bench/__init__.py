"""toolcall-bench: toolcall parsers against vLLM's built-in parsers of the same name.

For every installed toolcall parser whose name vLLM 0.33 also has built in, the
benchmark generates realistic outputs of the format (:mod:`toolcall_bench.outputs`),
tokenizes them with the family's real tokenizer, and times in one process, interleaved,
vLLM's built-in parser and ours through our vLLM adapter (both inside vLLM's own
``DelegatingParser``) and ours through the core protocol alone
(:mod:`toolcall_bench.drivers`, :mod:`toolcall_bench.measure`). Results go to a JSON
file and, between markers, into each plugin's README (:mod:`toolcall_bench.report`).
Run it with ``nox -s bench`` (DESIGN §8); it is a benchmark, not a test.
"""

from toolcall_bench.run import main

__all__ = ["main"]
