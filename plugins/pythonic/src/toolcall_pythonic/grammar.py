"""Structural tags for ``pythonic`` and ``olmo3``: a plan (DESIGN §5) as xgrammar data.

xgrammar has no builtin for Python calls, so the calls are an EBNF grammar (the
``grammar`` format of a structural tag) in which every keyword argument's value is
a Python literal of the type its schema gives:

* ``string``: a string literal: ``'...'`` or ``"..."``, triple-quoted, with a ``u``,
  ``r`` or ``f`` prefix (an f-string without placeholders), and adjacent literals
  joined (``'a' "b"``); ``enum``/``const`` strings in either quote;
* ``integer``: ``7``, ``-3``, ``1_000``, ``0x1F``, ``0o17``, ``0b101``; ``number``: those
  and floats (``1.5``, ``.5``, ``2e3``); ``boolean``: ``True``/``False``; ``null``:
  ``None``; ``olmo3`` also writes ``true``, ``false`` and ``null``;
* ``array``: a list, a tuple or a set of items of the item schema; ``object``: a dict
  with the declared keys (as string literals) and typed values;
* ``anyOf``/``oneOf``, type lists, ``nullable`` and local ``$ref`` as alternatives; a
  schema that says nothing accepts any Python literal.

Per tool, **pinned** (``strict: true`` or ``--tool-strict-level parameter``) means the
whole schema: only declared keywords, in the schema's order (as vLLM and xgrammar pin
JSON arguments), required ones present, nested objects likewise. **Not pinned**: the
declared keywords in any order, each value of its own top-level type (vLLM's "shallow"
tag); any keywords when the schema declares none. Whitespace may stand wherever Python
allows it inside brackets. Length, range and pattern keywords are not enforced.

Plans (what the parser reads, and nothing a schema forbids):

* ``auto``: text, with a call list at the start of the output (after whitespace), right
  after a list there, after ``<|python_tag|>`` (trigger), or at the start of a line
  (trigger ``\\n[``); where the parser reads a list as calls whatever its name (the
  first three) the list must name declared tools; ``olmo3``: text with
  ``<function_calls>`` blocks (trigger ``<function_calls>``);
* ``required``: one call list (block) and nothing else but whitespace around it;
* named: one call of that tool; ``parallel_tool_calls: false``: one call in all.

Nothing here imports xgrammar: ``xgrammar.Grammar.from_structural_tag(json.dumps(tag))``
compiles the data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolcall.strictness import Obligation, Plan, ToolPlan
from toolcall.tags import leaving

__all__ = ["PYTHON_TAG", "calls_grammar", "olmo3_tag", "pythonic_tag"]

START = "<function_calls>"
END = "</function_calls>"
_WS = r"[ \t\r\n]*"
_BLANK = {"type": "regex", "pattern": _WS}
#: Free text's first character where a list or <|python_tag|> would be calls.
_TEXT = {"type": "regex", "pattern": _WS + r"[^\[< \t\r\n]"}
#: Llama 3.2 may write it before the list (Meta's prompt-format document); it reaches
#: the parser only when the request keeps special tokens.
PYTHON_TAG = "<|python_tag|>"

# Python literals, whatever their type. ``esc`` is a backslash escape the reader
# decodes cleanly (no lone surrogate, no code point past U+10FFFF).
_BASE = r"""
ws ::= [ \t\n\r\f]*
hex ::= [0-9a-fA-F]
u4 ::= [0-9a-cA-Ce-fE-F] hex hex hex | [dD] [0-7] hex hex
u8 ::= "0000" u4 | "000" [1-9a-fA-F] hex hex hex hex | "0010" hex hex hex hex
esc ::= "\\" ([^xuUN] | "x" hex hex | "u" u4 | "U" u8 | "N{" [A-Za-z0-9 \-]+ "}")
sq ::= "'" ([^'\\\n\r\x00] | esc)* "'"
dq ::= "\"" ([^"\\\n\r\x00] | esc)* "\""
sq3 ::= "'''" ([^'\\\x00] | esc | "'" ([^'\\\x00] | esc) | "''" ([^'\\\x00] | esc))* "'''"
dq3 ::= "\"\"\"" ([^"\\\x00] | esc | "\"" ([^"\\\x00] | esc) | "\"\"" ([^"\\\x00] | esc))* "\"\"\""
rsq ::= [rR] "'" ([^'\\\n\r\x00] | "\\" [^\x00])* "'"
rdq ::= [rR] "\"" ([^"\\\n\r\x00] | "\\" [^\x00])* "\""
fsq ::= [fF] "'" ([^'\\\n\r\x00{}] | esc | "{{" | "}}")* "'"
fdq ::= [fF] "\"" ([^"\\\n\r\x00{}] | esc | "{{" | "}}")* "\""
plain ::= sq | dq | sq3 | dq3
lit ::= plain | [uU] plain | rsq | rdq | fsq | fdq
str ::= lit (ws plain)*
digits ::= [0-9] ("_"? [0-9])*
sign ::= ([-+] ws)?
int ::= sign (decimal | "0" [xX] ("_"? hex)+ | "0" [oO] ("_"? [0-7])+ | "0" [bB] ("_"? [01])+)
decimal ::= [1-9] ("_"? [0-9])* | "0" ("_"? "0")*
exp ::= [eE] [-+]? digits
float ::= sign (digits "." digits? exp? | "." digits exp? | digits exp)
number ::= int | float
key ::= str | number | bool | null
any ::= str | number | bool | null | anylist | anytuple | anydict | anyset
anylist ::= "[" ws (any (ws "," ws any)* (ws ",")?)? ws "]"
anytuple ::= "(" ws (any ws "," (ws any (ws "," ws any)* (ws ",")?)?)? ws ")"
anydict ::= "{" ws (key ws ":" ws any (ws "," ws key ws ":" ws any)* (ws ",")?)? ws "}"
anyset ::= "{" ws key (ws "," ws key)* (ws ",")? ws "}"
ident ::= [a-zA-Z_] [a-zA-Z0-9_]*
anykwargs ::= (ident ws "=" ws any (ws "," ws ident ws "=" ws any)* (ws ",")?)?
"""
_PYTHON_WORDS = 'bool ::= "True" | "False"\nnull ::= "None"\n'
_JSON_WORDS = 'bool ::= "True" | "False" | "true" | "false"\nnull ::= "None" | "null"\n'
_TYPES = {"string": "str", "integer": "int", "number": "number", "boolean": "bool", "null": "null"}


def _terminal(text: str) -> str:
    """An EBNF string terminal for ``text``."""
    return json.dumps(text, ensure_ascii=False)


def _python_string(value: str, quote: str) -> str:
    """``value`` as a Python string literal in ``quote``."""
    body = []
    for char in value:
        if char in ("\\", quote):
            body.append("\\" + char)
        elif char == "\n":
            body.append("\\n")
        elif char == "\r":
            body.append("\\r")
        elif ord(char) < 0x20 or char == "\x7f":
            body.append(f"\\x{ord(char):02x}")
        else:
            body.append(char)
    return quote + "".join(body) + quote


class _Rules:
    """The EBNF of one grammar: the base rules, and a rule per schema met."""

    def __init__(self, *, json_words: bool) -> None:
        self.json_words = json_words
        self.rules: list[str] = []
        self.count = 0
        self.refs: dict[str, str] = {}
        self.root: Mapping[str, Any] = {}

    def add(self, body: str) -> str:
        self.count += 1
        name = f"r{self.count}"
        self.rules.append(f"{name} ::= {body}")
        return name

    def text(self, root: str) -> str:
        words = _JSON_WORDS if self.json_words else _PYTHON_WORDS
        return f"root ::= {root}\n{_BASE.strip()}\n{words}" + "\n".join(self.rules) + "\n"

    # -- values -------------------------------------------------------------------------

    def literal(self, value: object) -> str | None:
        """The source forms of one JSON value, or ``None`` when it has none simple."""
        if isinstance(value, str):
            return " | ".join(_terminal(_python_string(value, q)) for q in ("'", '"'))
        if value is True or value is False:
            word = "True" if value else "False"
            json_word = "true" if value else "false"
            return _terminal(word) + (f" | {_terminal(json_word)}" if self.json_words else "")
        if value is None:
            return '"None"' + (' | "null"' if self.json_words else "")
        if isinstance(value, int | float):
            return _terminal(repr(value))
        return None

    def value(self, schema: object, *, shallow: bool = False) -> str:
        """The rule for a value of ``schema`` (``shallow``: its top-level type only)."""
        if not isinstance(schema, Mapping) or not schema:
            return "any"
        reference = schema.get("$ref")
        if isinstance(reference, str):
            return self.reference(reference, shallow=shallow)
        if "const" in schema:
            return self.add(self.literal(schema["const"]) or "any")
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            forms = [self.literal(member) for member in schema["enum"]]
            return self.add(" | ".join(form or "any" for form in forms))
        for combinator in ("anyOf", "oneOf"):
            branches = schema.get(combinator)
            if isinstance(branches, list) and branches:
                names = [self.value(branch, shallow=shallow) for branch in branches]
                return self.add(" | ".join(names))
        kinds = schema.get("type")
        if isinstance(kinds, str):
            kinds = [kinds]
        if not isinstance(kinds, list):
            kinds = ["object"] if isinstance(schema.get("properties"), Mapping) else []
        if not kinds:
            return "any"
        if schema.get("nullable") is True and "null" not in kinds:
            kinds = [*kinds, "null"]
        names = [self.typed(kind, schema, shallow=shallow) for kind in kinds]
        return names[0] if len(names) == 1 else self.add(" | ".join(names))

    def reference(self, reference: str, *, shallow: bool) -> str:
        if shallow or not reference.startswith("#/"):
            return "any"
        if reference in self.refs:
            return self.refs[reference]
        target: object = self.root
        for part in reference[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        self.count += 1
        name = f"r{self.count}"
        self.refs[reference] = name
        self.rules.append(f"{name} ::= {self.value(target)}")
        return name

    def typed(self, kind: object, schema: Mapping[str, Any], *, shallow: bool) -> str:
        if kind in _TYPES:
            return _TYPES[str(kind)]
        if kind == "array":
            items = "any" if shallow else self.value(schema.get("items", True))
            many = f'{items} (ws "," ws {items})* (ws ",")?'
            forms = [
                f'"[" ws ({many})? ws "]"',
                f'"(" ws ({items} ws "," (ws {many})?)? ws ")"',
            ]
            item_types = schema.get("items", {})
            if not isinstance(item_types, Mapping) or item_types.get("type") not in (
                "array",
                "object",
            ):
                forms.append(f'"{{" ws {many} ws "}}"')
            return self.add(" | ".join(forms))
        if kind == "object":
            properties = schema.get("properties")
            if shallow or not isinstance(properties, Mapping) or not properties:
                return "anydict"
            required = schema.get("required")
            members = [
                (f'({self.literal(str(key))}) ws ":" ws {self.value(sub)}', key)
                for key, sub in properties.items()
            ]
            body = self.ordered(members, required if isinstance(required, list) else [])
            return self.add(f'"{{" ws {body} ws "}}"')
        return "any"

    def ordered(self, members: Sequence[tuple[str, object]], required: Sequence[object]) -> str:
        """Members in the declared order, required ones present, comma-separated, with
        an optional trailing comma after the last one written."""
        after = '(ws ",")?'  # the members from here on, each after a comma
        first = '""'  # the members from here on, none written before them
        for member, key in reversed(members):
            if key in required:
                after, first = (
                    self.add(f'ws "," ws {member} {after}'),
                    self.add(f"{member} {after}"),
                )
            else:
                after, first = (
                    self.add(f'(ws "," ws {member})? {after}'),
                    self.add(f"{member} {after} | {first}"),
                )
        return first


def _kwargs(rules: _Rules, tool_plan: ToolPlan) -> str:
    """The rule for a call's keyword arguments."""
    parameters = tool_plan.tool.parameters or {}
    rules.root = parameters
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return "anykwargs"
    names = [name for name in properties if isinstance(name, str) and name.isidentifier()]
    if not tool_plan.pinned:
        pairs = [
            f'{_terminal(name)} ws "=" ws {rules.value(properties[name], shallow=True)}'
            for name in names
        ]
        pair = rules.add(" | ".join(pairs)) if pairs else None
        if pair is None:
            return "anykwargs"
        return rules.add(f'({pair} (ws "," ws {pair})* (ws ",")?)?')
    required = parameters.get("required")
    members = [
        (f'{_terminal(name)} ws "=" ws {rules.value(properties[name])}', name) for name in names
    ]
    return rules.add(rules.ordered(members, required if isinstance(required, list) else []))


def _call(rules: _Rules, tool_plan: ToolPlan) -> str:
    arguments = _kwargs(rules, tool_plan)
    return rules.add(f'{_terminal(tool_plan.tool.name)} ws "(" ws {arguments} ws ")"')


def calls_grammar(plan: Plan, *, lines: bool = False, json_words: bool = False) -> str:
    """The EBNF of the calls the plan allows, without the brackets (or markers): a list's
    inside (``call, call``) or, with ``lines``, one call per line."""
    rules = _Rules(json_words=json_words)
    calls = [_call(rules, tool_plan) for tool_plan in plan.tools]
    call = rules.add(" | ".join(calls))
    if plan.at_most_one or plan.obligation is Obligation.NAMED:
        return rules.text(f"ws {call} ws" if lines else f'ws {call} (ws ",")? ws')
    if lines:
        return rules.text(f'ws {call} ([ \\t\\r\\f]* "\\n" ws {call})* ws')
    return rules.text(f'ws {call} (ws "," ws {call})* (ws ",")? ws')


def _tag(begin: str, grammar: str, end: str) -> dict[str, Any]:
    return {
        "type": "tag",
        "begin": begin,
        "content": {"type": "grammar", "grammar": grammar},
        "end": end,
    }


def pythonic_tag(plan: Plan) -> dict[str, Any] | None:
    """The structural tag of ``pythonic`` for ``plan``, or ``None`` without a grammar."""
    if not plan.grammar or not plan.tools or plan.obligation is Obligation.NONE:
        return None
    grammar = calls_grammar(plan)
    if plan.obligation is not Obligation.OPTIONAL:
        return {
            "type": "structural_tag",
            "format": {"type": "sequence", "elements": [_BLANK, _tag("[", grammar, "]"), _BLANK]},
        }
    listed = _tag("[", grammar, "]")
    # After <|python_tag|> the parser reads a list as calls whatever its first name.
    tagged = {
        "type": "tag",
        "begin": PYTHON_TAG,
        "content": {"type": "sequence", "elements": [_BLANK, listed]},
        "end": "",
    }
    triggers = ["\n[", PYTHON_TAG]
    tags = [_tag("\n[", grammar, "]"), tagged]
    later: dict[str, Any]
    if plan.at_most_one:
        later = {"type": "any_text", "excludes": triggers}
    else:
        later = {"type": "triggered_tags", "triggers": triggers, "tags": tags}
    text_first = {
        "type": "triggered_tags",
        "triggers": triggers,
        "tags": tags,
        "stop_after_first": plan.at_most_one,
    }
    # At the start of the output, and after a list there (whitespace between), the parser
    # reads a list (or <|python_tag|> and a list) as calls whatever the first name: there
    # the grammar opens the list itself, and the free text begins with anything else.
    one = {"type": "or", "elements": [listed, tagged]}
    lists = one
    if not plan.at_most_one:
        more = {"type": "sequence", "elements": [_BLANK, one]}
        lists = {"type": "sequence", "elements": [one, {"type": "star", "content": more}]}
    leave = {"type": "regex", "pattern": _WS + leaving(PYTHON_TAG)}

    def text_after(then: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "sequence", "elements": [_TEXT, then]},
            {"type": "sequence", "elements": [leave, then]},
        ]

    after_lists = {"type": "or", "elements": [_BLANK, *text_after(later)]}
    return {
        "type": "structural_tag",
        "format": {
            "type": "or",
            "elements": [
                {"type": "sequence", "elements": [_BLANK, lists, after_lists]},
                *text_after(text_first),
                _BLANK,
            ],
        },
    }


def olmo3_tag(plan: Plan) -> dict[str, Any] | None:
    """The structural tag of ``olmo3`` for ``plan``, or ``None`` without a grammar."""
    if not plan.grammar or not plan.tools or plan.obligation is Obligation.NONE:
        return None
    block = _tag(START, calls_grammar(plan, lines=True, json_words=True), END)
    if plan.obligation is not Obligation.OPTIONAL:
        return {
            "type": "structural_tag",
            "format": {"type": "sequence", "elements": [_BLANK, block, _BLANK]},
        }
    return {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": [START],
            "tags": [block],
            "excludes": [END],
            "stop_after_first": plan.at_most_one,
        },
    }
