"""Throwaway plugin distributions for the registry and CLI tests.

A :class:`Site` is a directory on ``sys.path`` holding plugin modules and, for
each distribution, a real ``NAME-VERSION.dist-info`` (``METADATA`` and
``entry_points.txt``) that ``importlib.metadata`` reads exactly as it reads an
installed wheel. :func:`pip_install` builds and installs a pyproject plugin with
pip instead, for the test that the whole packaging path works.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Mapping
from pathlib import Path

#: A tiny format for tests: ``<call>NAME ARGUMENTS</call>``; everything else is
#: content. ARGUMENTS is the call's JSON object text, emitted as written. With
#: ``tool_choice: "none"`` everything is content.
TAG_FORMAT = """
from toolcall import Delta, Parser, ToolCallDelta, hookimpl

START, END = "<call>", "</call>"


class TagStream:
    events = ()
    framing = ()

    def __init__(self, parser):
        self.parser = parser
        self.buffer = ""
        self.inside = False
        self.index = 0

    def feed(self, text, token_ids=()):
        if self.parser.request.tool_choice == "none":
            return [Delta(content=text)] if text else []
        self.buffer += text
        out = []
        while True:
            if not self.inside:
                at = self.buffer.find(START)
                if at < 0:
                    keep = max(
                        (n for n in range(1, len(START)) if self.buffer.endswith(START[:n])),
                        default=0,
                    )
                    released = self.buffer[: len(self.buffer) - keep]
                    if released:
                        out.append(Delta(content=released))
                    self.buffer = self.buffer[len(released) :]
                    return out
                if at:
                    out.append(Delta(content=self.buffer[:at]))
                self.buffer = self.buffer[at + len(START) :]
                self.inside = True
            else:
                at = self.buffer.find(END)
                if at < 0:
                    return out
                name, _, arguments = self.buffer[:at].strip().partition(" ")
                self.buffer = self.buffer[at + len(END) :]
                self.inside = False
                head = ToolCallDelta(self.index, id=self.parser.new_call_id(), name=name)
                out.append(Delta(tool_calls=(head,)))
                out.append(Delta(tool_calls=(ToolCallDelta(self.index, arguments=arguments),)))
                self.index += 1

    def finish(self):
        rest = (START if self.inside else "") + self.buffer
        self.buffer, self.inside = "", False
        return [Delta(content=rest)] if rest else []


def tag_parser(parser_name):
    class TagParser(Parser):
        name = parser_name
        markers = (START, END)
        summary = "test format <call>NAME ARGS</call>"

        def stream(self):
            return TagStream(self)

    return TagParser
"""


def parsers_plugin(*names: str) -> str:
    """Source of a plugin module offering a tag-format parser for each name."""
    listed = ", ".join(f"tag_parser({name!r})" for name in names)
    return TAG_FORMAT + textwrap.dedent(
        f"""

        PARSERS = [{listed}]


        @hookimpl
        def toolcall_parsers():
            return PARSERS
        """
    )


class Site:
    """A directory on ``sys.path`` to install throwaway distributions into."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.modules: list[str] = []
        self._tag = uuid.uuid4().hex[:8]

    def module_name(self, stem: str) -> str:
        """A module name unique to this site (so sys.modules never mixes tests)."""
        return f"{stem}_{self._tag}"

    def add_module(self, stem: str, source: str) -> str:
        name = self.module_name(stem)
        (self.path / f"{name}.py").write_text(source, encoding="utf-8")
        self.modules.append(name)
        return name

    def add_distribution(
        self,
        name: str,
        entry_points: Mapping[str, str],
        *,
        version: str = "1.0",
        group: str = "toolcall",
    ) -> Path:
        """Write ``NAME-VERSION.dist-info`` with METADATA and the entry points."""
        info = self.path / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = [f"[{group}]"] + [f"{key} = {value}" for key, value in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return info

    def add_plugin(
        self, distribution: str, source: str, names: tuple[str, ...], *, version: str = "1.0"
    ) -> str:
        """A distribution whose one module is listed under every name in ``names``."""
        module = self.add_module(distribution.replace("-", "_"), source)
        self.add_distribution(distribution, dict.fromkeys(names, module), version=version)
        return module


def pip_install(project: Path, target: Path) -> None:
    """``pip install --target`` a pyproject project, built with the hatchling we have."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(project),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
