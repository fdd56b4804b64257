"""The benchmark's floor as a tool parser of a real ``vllm serve``.

``vllm serve --tool-parser-plugin THIS_FILE --tool-call-parser toolcall_bench_floor`` loads
this file, which registers :func:`toolcall_bench.drivers.floor_parser_class` under
:data:`NAME`: every delta one argument fragment of one call, built the cheapest way vLLM
0.33 allows. The server benchmark's ``floor`` configuration serves it, with our plugin
loaded as for ``ours``, so that what separates the two servers is the parser alone.
"""

from __future__ import annotations

from vllm.tool_parsers import ToolParserManager

from toolcall_bench.drivers import floor_parser_class

NAME = "toolcall_bench_floor"

ToolParserManager.register_module(NAME, module=floor_parser_class())
