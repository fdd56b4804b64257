"""The conformance kit, run on this package's parser through the kit's pytest plugin."""

from __future__ import annotations

from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestConformance(ConformanceSuite):
    parser = "example_tags"
    case_dirs = ("cases",)
