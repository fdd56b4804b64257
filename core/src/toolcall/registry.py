"""The plugin registry: which parsers are installed, and which distribution provides each.

Plugins are found through the entry-point group ``toolcall``. Each entry name is
a parser name its distribution claims; the entry value names the plugin (a module,
or ``module:attribute``) that implements the hooks of :mod:`toolcall.hookspecs`.
One module may be listed under several names; it is loaded once. An entry name
that starts with ``_`` claims no parser (a plugin that only adds commands).

Rules:

* Loading is lazy: :meth:`Registry.load` reads distribution metadata only; plugin
  modules are imported on first use of :meth:`~Registry.get`,
  :meth:`~Registry.names`, :meth:`~Registry.entries` or :attr:`~Registry.problems`.
* A plugin whose import fails, whose hook raises, or whose hook returns anything
  but :class:`~toolcall.Parser` subclasses with a ``str`` name is skipped; the
  failure is logged once (logger ``toolcall``), naming the distribution and the
  error, and the other plugins load. Asking for a name that plugin claims raises
  :class:`PluginError` carrying the original error. "Fails" and "raises" include
  every ``BaseException`` but ``KeyboardInterrupt``: a plugin that calls
  ``sys.exit()`` breaks itself, not the program that loads it.
* A name claimed by two distributions is rejected; asking for it raises
  :class:`PluginError` naming both.
* ``TOOLCALL_BLOCK=a,b`` blocks parser names (entry names and the names parsers
  carry) and whole distributions (by distribution name). A plugin all of whose
  entry names are blocked is not imported at all.
* An entry whose value names a JSON resource, ``package:path/file.json``, is a parser
  made of data (a response template, say): the registry reads it and asks the plugins'
  ``toolcall_parser_from_data`` hook for the parser, after every plugin of code has
  loaded. Data no plugin reads, and data a plugin refuses, fail like a broken plugin.
  Several names on one resource are aliases: the first name's parser under the others
  (sharing its corpus), made once.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any

import pluggy

from toolcall import hookspecs
from toolcall.parser import Parser

__all__ = [
    "BLOCK_ENV",
    "GROUP",
    "ParserEntry",
    "PluginError",
    "Registry",
    "RegistryError",
    "UnknownParserError",
]

logger = logging.getLogger("toolcall")

#: The entry-point group (and pluggy project name).
GROUP = hookspecs.PROJECT
#: Comma-separated parser or distribution names to ignore.
BLOCK_ENV = "TOOLCALL_BLOCK"


class RegistryError(Exception):
    """A parser name cannot be served."""


class UnknownParserError(RegistryError, LookupError):
    """No installed plugin offers the name (or it is blocked)."""

    def __init__(self, name: str, available: Sequence[str], *, reason: str = "") -> None:
        self.name = name
        self.available = tuple(available)
        if not reason:
            installed = ", ".join(self.available) if self.available else "none"
            reason = f"unknown parser {name!r} (installed: {installed})"
        super().__init__(reason)

    def __str__(self) -> str:
        return str(self.args[0])


class PluginError(RegistryError):
    """A plugin that claims the name is broken, or two plugins claim it.

    ``error`` is the original exception (also the ``__cause__`` when raised by
    :meth:`Registry.get`); ``distributions`` the distributions involved.
    """

    def __init__(
        self,
        message: str,
        *,
        distributions: Sequence[str] = (),
        error: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.distributions = tuple(distributions)
        self.error = error


@dataclass(frozen=True)
class ParserEntry:
    """An installed parser: its name, class, and the distribution that provides it."""

    name: str
    parser_class: type[Parser]
    distribution: str
    version: str


@dataclass(frozen=True)
class _Source:
    """One plugin target of one distribution, with the entry names that list it."""

    distribution: str
    version: str
    value: str
    entry_names: tuple[str, ...]
    entry_point: metadata.EntryPoint

    @property
    def label(self) -> str:
        return f"{self.distribution} {self.version}"

    @property
    def claims(self) -> tuple[str, ...]:
        return tuple(name for name in self.entry_names if not name.startswith("_"))


@dataclass(frozen=True)
class _Failure:
    message: str
    distributions: tuple[str, ...]
    error: BaseException | None = None

    def exception(self) -> PluginError:
        return PluginError(self.message, distributions=self.distributions, error=self.error)


@dataclass(frozen=True)
class _Loaded:
    entries: Mapping[str, ParserEntry]
    failures: Mapping[str, _Failure]
    problems: tuple[str, ...]
    plugins: tuple[tuple[_Source, object], ...]
    manager: pluggy.PluginManager = field(repr=False)


#: An entry-point value that names data, not code: ``package:path/to/file.json``.
_DATA_VALUE = re.compile(r"^\s*(?P<package>[\w.]+)\s*:\s*(?P<path>[\w./-]+\.json)\s*$")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def blocked_from_env(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The names in ``TOOLCALL_BLOCK`` (comma-separated, blanks ignored)."""
    value = (environ if environ is not None else os.environ).get(BLOCK_ENV, "")
    return frozenset(item.strip() for item in value.split(",") if item.strip())


def _discover(path: Sequence[str] | None) -> list[_Source]:
    """The ``toolcall`` entry points of the installed distributions, metadata only."""
    seen: set[str] = set()
    sources: list[_Source] = []
    distributions = (
        metadata.distributions(path=list(path)) if path is not None else metadata.distributions()
    )
    for dist in distributions:
        # Like importlib.metadata.entry_points(): the first of a name on the path wins.
        # The name comes from the file name where possible: reading every
        # distribution's METADATA would cost a few hundred ms in a large venv.
        key = getattr(dist, "_normalized_name", None) or _normalize(dist.metadata["Name"] or "")
        if key in seen:
            continue
        seen.add(key)
        entry_points = dist.entry_points.select(group=GROUP)
        if not entry_points:
            continue
        name = dist.metadata["Name"] or key or "<unnamed distribution>"
        by_value: dict[str, list[metadata.EntryPoint]] = {}
        for entry_point in entry_points:
            by_value.setdefault(entry_point.value, []).append(entry_point)
        for value, listed in by_value.items():
            sources.append(
                _Source(
                    distribution=name,
                    version=dist.version or "?",
                    value=value,
                    entry_names=tuple(ep.name for ep in listed),
                    entry_point=listed[0],
                )
            )
    return sources


class Registry:
    """The installed parsers, loaded on first use.

    Build it with :meth:`load`; it is cheap until a parser is asked for.
    """

    def __init__(self, sources: Iterable[_Source], *, blocked: Iterable[str] = ()) -> None:
        self._blocked = frozenset(blocked)
        blocked_dists = {_normalize(name) for name in self._blocked}
        self._sources = tuple(
            source
            for source in sources
            if _normalize(source.distribution) not in blocked_dists
            and any(name not in self._blocked for name in source.entry_names)
        )
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        path: Sequence[str] | None = None,
    ) -> Registry:
        """Find the installed plugins (reads metadata; imports nothing).

        ``environ`` supplies ``TOOLCALL_BLOCK`` (default: ``os.environ``);
        ``path`` restricts discovery to these directories (default: ``sys.path``).
        """
        return cls(_discover(path), blocked=blocked_from_env(environ))

    # -- cheap queries (metadata only) ---------------------------------------------

    @property
    def blocked(self) -> frozenset[str]:
        return self._blocked

    def claimed_names(self) -> list[str]:
        """The parser names the plugins declare as entry points, without importing them.

        This is what the vLLM bridge registers. It may include names that turn out
        to be broken or contested; :meth:`get` then raises the reason.
        """
        return sorted(
            {
                name
                for source in self._sources
                for name in source.claims
                if name not in self._blocked
            }
        )

    # -- queries that load the plugins ----------------------------------------------

    def names(self) -> list[str]:
        """The parser names that :meth:`get` serves."""
        return sorted(self._state.entries)

    def entries(self) -> list[ParserEntry]:
        return [self._state.entries[name] for name in self.names()]

    @property
    def problems(self) -> list[str]:
        """One line per broken plugin, contested name or inconsistency."""
        return list(self._state.problems)

    def get(self, name: str) -> type[Parser]:
        """The parser class for ``name``.

        Raises :class:`UnknownParserError` for a name no plugin offers (or a
        blocked one) and :class:`PluginError` for a name whose plugin is broken or
        that two distributions claim.
        """
        if name in self._blocked:
            msg = f"parser {name!r} is blocked by {BLOCK_ENV}"
            raise UnknownParserError(name, self.names(), reason=msg)
        state = self._state
        failure = state.failures.get(name)
        if failure is not None:
            raise failure.exception() from failure.error
        entry = state.entries.get(name)
        if entry is None:
            raise UnknownParserError(name, self.names())
        return entry.parser_class

    def from_chat_template(self, chat_template: str) -> type[Parser]:
        """A parser derived from ``chat_template`` by an installed plugin (hook
        ``toolcall_parser_from_chat_template``); raises ``LookupError`` when no plugin
        derives parsers and ``ValueError`` with the plugin's reason when it cannot."""
        made = self._state.manager.hook.toolcall_parser_from_chat_template(
            chat_template=chat_template
        )
        if made is None:
            msg = (
                "no installed plugin derives a parser from a chat template "
                "(toolcall-hf-response-template does)"
            )
            raise LookupError(msg)
        try:
            return _parser_classes([[made]])[0]
        except TypeError as error:
            raise ValueError(f"hook toolcall_parser_from_chat_template {error}") from error

    def add_commands(self, subparsers: hookspecs.Subparsers) -> list[str]:
        """Let each plugin add its subcommands; returns a line per plugin that failed."""
        state = self._state
        problems: list[str] = []
        for source, plugin in state.plugins:
            caller = _single_caller(state.manager, "toolcall_add_commands", plugin)
            try:
                caller(subparsers=subparsers)
            except KeyboardInterrupt:
                raise
            except BaseException as error:
                line = (
                    f"toolcall plugin {source.label} ({source.value}): "
                    f"hook toolcall_add_commands raised {_describe(error)}"
                )
                logger.error("%s", line)
                problems.append(line)
        return problems

    # -- loading ---------------------------------------------------------------------

    @property
    def _state(self) -> _Loaded:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load_all()
                loaded = self._loaded
        return loaded

    def _load_all(self) -> _Loaded:
        manager = pluggy.PluginManager(hookspecs.PROJECT)
        manager.add_hookspecs(hookspecs)
        problems: list[str] = []
        failures: dict[str, _Failure] = {}
        offers: dict[str, list[ParserEntry]] = {}
        claims: dict[str, dict[str, str]] = {}  # name -> normalized dist -> label
        plugins: list[tuple[_Source, object]] = []

        def fail(source: _Source, what: str, error: BaseException) -> None:
            line = f"toolcall plugin {source.label} ({source.value}): {what}"
            logger.error("%s", line)
            problems.append(line)
            for name in source.claims:
                if name not in self._blocked:
                    failures[name] = _Failure(
                        f"parser {name!r} is unavailable: {line}",
                        (source.distribution,),
                        error,
                    )

        data_sources = [s for s in self._sources if _DATA_VALUE.match(s.value)]
        code_sources = [s for s in self._sources if not _DATA_VALUE.match(s.value)]
        for source in [*code_sources, *data_sources]:
            for name in source.claims:
                if name not in self._blocked:
                    claims.setdefault(name, {})[_normalize(source.distribution)] = source.label
            try:
                if source in data_sources:
                    classes = _parsers_from_data(manager, source, self._blocked)
                    plugin: object = None
                else:
                    loaded = _load_plugin(manager, source)
                    if loaded is None:
                        continue
                    plugin, classes = loaded
            except _PluginFailure as broken:
                fail(source, broken.what, broken.error)
                continue
            if plugin is not None:
                plugins.append((source, plugin))
            offered: set[str] = set()
            for parser_class in classes:
                name = parser_class.name
                offered.add(name)
                if name in self._blocked:
                    continue
                if name not in source.entry_names:
                    line = (
                        f"toolcall plugin {source.label} ({source.value}): parser {name!r} is not "
                        f"declared as an entry point of group {GROUP!r}, so vLLM will not see it"
                    )
                    logger.warning("%s", line)
                    problems.append(line)
                claims.setdefault(name, {})[_normalize(source.distribution)] = source.label
                offers.setdefault(name, []).append(
                    ParserEntry(name, parser_class, source.distribution, source.version)
                )
            for name in source.claims:
                if name not in offered and name not in self._blocked:
                    line = (
                        f"toolcall plugin {source.label} ({source.value}): entry point {name!r} "
                        f"names a parser its toolcall_parsers hook does not return"
                    )
                    logger.error("%s", line)
                    problems.append(line)
                    failure = _Failure(
                        f"parser {name!r} is unavailable: {line}", (source.distribution,)
                    )
                    failures.setdefault(name, failure)

        entries: dict[str, ParserEntry] = {}
        for name, labels in sorted(claims.items()):
            if len(labels) > 1:
                both = " and ".join(sorted(labels.values()))
                line = (
                    f"parser name {name!r} is claimed by {both}; it is disabled "
                    f"(uninstall one, or block one distribution with {BLOCK_ENV})"
                )
                logger.error("%s", line)
                problems.append(line)
                failures[name] = _Failure(line, tuple(sorted(labels)))
            elif name in offers and name not in failures:
                entries[name] = offers[name][0]
        return _Loaded(
            entries=entries,
            failures=failures,
            problems=tuple(problems),
            plugins=tuple(plugins),
            manager=manager,
        )


class _PluginFailure(Exception):
    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__(what)
        self.what = what
        self.error = error


def _load_plugin(
    manager: pluggy.PluginManager, source: _Source
) -> tuple[object, list[type[Parser]]] | None:
    """Import ``source``, register it and ask it for its parsers.

    Returns ``None`` when the same plugin object is already registered (two
    distributions naming one module); raises :class:`_PluginFailure`.
    """
    try:
        plugin = source.entry_point.load()
    except KeyboardInterrupt:
        raise
    except BaseException as error:
        raise _PluginFailure(f"import failed: {_describe(error)}", error) from error
    if manager.is_registered(plugin):
        return None
    try:
        manager.register(plugin, name=f"{source.distribution}:{source.value}")
    except KeyboardInterrupt:
        raise
    except BaseException as error:
        raise _PluginFailure(f"not a valid plugin: {_describe(error)}", error) from error
    try:
        unknown = sorted(
            caller.name for caller in manager.get_hookcallers(plugin) or () if not caller.has_spec()
        )
        if unknown:
            msg = f"implements unknown hook(s) {', '.join(unknown)}"
            raise _PluginFailure(msg, TypeError(msg))
        try:
            results = _single_caller(manager, "toolcall_parsers", plugin)()
        except KeyboardInterrupt:
            raise
        except BaseException as error:
            what = f"hook toolcall_parsers raised {_describe(error)}"
            raise _PluginFailure(what, error) from error
        try:
            classes = _parser_classes(results)
        except TypeError as error:
            raise _PluginFailure(f"hook toolcall_parsers {error}", error) from error
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # the returned classes' own code raised
            what = f"hook toolcall_parsers returned a class that raised {_describe(error)}"
            raise _PluginFailure(what, error) from error
    except _PluginFailure:
        manager.unregister(plugin)
        raise
    return plugin, classes


def _parsers_from_data(
    manager: pluggy.PluginManager, source: _Source, blocked: frozenset[str]
) -> list[type[Parser]]:
    """The parsers a data entry names, made by the plugins' ``toolcall_parser_from_data``."""
    found = _DATA_VALUE.match(source.value)
    assert found is not None
    package, path = found.group("package"), found.group("path")
    try:
        text = resources.files(package).joinpath(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except Exception as error:
        what = f"cannot read the data {package}:{path}: {_describe(error)}"
        raise _PluginFailure(what, error) from error
    if not isinstance(data, Mapping):
        msg = f"the data {package}:{path} is not a JSON object"
        raise _PluginFailure(msg, TypeError(msg))
    classes: list[type[Parser]] = []
    for name in source.claims:
        if name in blocked:
            continue
        if classes:  # a second name for the same data: an alias of the first
            first = classes[0]
            alias = {"__module__": first.__module__, "name": name}
            alias["corpus"] = first.corpus or first.name
            classes.append(type(first.__name__, (first,), alias))
            continue
        try:
            made = manager.hook.toolcall_parser_from_data(name=name, data=data)
        except Exception as error:
            what = f"the data {package}:{path} for {name!r} is refused: {_describe(error)}"
            raise _PluginFailure(what, error) from error
        if made is None:
            msg = (
                f"no installed plugin reads the data {package}:{path} (a response template "
                "needs toolcall-hf-response-template)"
            )
            raise _PluginFailure(msg, LookupError(msg))
        try:
            checked = _parser_classes([[made]])
        except TypeError as error:
            raise _PluginFailure(f"hook toolcall_parser_from_data {error}", error) from error
        if checked[0].name != name:
            msg = f"hook toolcall_parser_from_data made {checked[0].name!r} for {name!r}"
            raise _PluginFailure(msg, TypeError(msg))
        classes.extend(checked)
    return classes


def _single_caller(manager: pluggy.PluginManager, hook: str, plugin: object) -> pluggy.HookCaller:
    """A caller of ``hook`` that runs only ``plugin``'s implementation."""
    others = [other for other in manager.get_plugins() if other is not plugin]
    return manager.subset_hook_caller(hook, remove_plugins=others)


def _parser_classes(results: Sequence[Any]) -> list[type[Parser]]:
    """Check what a plugin's ``toolcall_parsers`` returned (one result per
    implementation); raise ``TypeError`` if it is not parser classes."""
    classes: list[type[Parser]] = []
    by_name: dict[str, type[Parser]] = {}
    for result in results:
        if not isinstance(result, Sequence) or isinstance(result, str | bytes):
            msg = f"returned {result!r}, not a sequence of toolcall.Parser subclasses"
            raise TypeError(msg)
        for item in result:
            if not (isinstance(item, type) and issubclass(item, Parser)):
                msg = f"returned {item!r}, which is not a toolcall.Parser subclass"
                raise TypeError(msg)
            name = getattr(item, "name", None)
            if not isinstance(name, str) or not name:
                msg = f"returned {item.__qualname__}, whose name is {name!r}, not a non-empty str"
                raise TypeError(msg)
            if inspect.isabstract(item):
                msg = f"returned {item.__qualname__}, which is abstract"
                raise TypeError(msg)
            known = by_name.setdefault(name, item)
            if known is not item:
                msg = (
                    f"returned two parsers named {name!r}: "
                    f"{known.__qualname__} and {item.__qualname__}"
                )
                raise TypeError(msg)
            if item not in classes:
                classes.append(item)
    return classes
