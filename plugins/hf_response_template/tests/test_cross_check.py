"""Cross-check: the dedicated families' corpora through ``hf`` with their formats as templates.

The plugin ships response templates (data) for the formats of the dedicated families:
``hermes`` (Hermes / Qwen JSON), ``glm`` (GLM-4.5 and GLM-4.7), ``mistral_v11``
(``[TOOL_CALLS]NAME[ARGS]{...}``, or ``NAME{...}``), ``mistral`` (before v11:
``[TOOL_CALLS][{...}, ...]``) and ``llama3_json`` (``{"name", "parameters"}``, at the start of
the output or after ``<|python_tag|>``, separated by ``;``). Every shipped case of those
families' corpora is parsed by ``hf`` with the template of its format (a Mistral case by its
tokenizer's generation), keeps the delta contract, and must give the same calls as the
family's own parse (the case's ``expected``, and the family's parser itself), except where
the region spec cannot express the family's format (README, "What a template cannot say"):

* **recoveries**: a template has none (python literals, ``parameters`` for ``arguments``,
  arguments as a string, a bare JSON call, a GLM value without ``<arg_value>``, a call
  cut by the next ``<tool_call>``, a list of llama calls);
* **defects and truncation inside non-JSON arguments**: between ``xml-inline`` tags a
  template skips text (transformers' rule) where GLM stops at a defect, and ``hf`` emits a
  value when it ends where GLM streams a string as it comes;
* **undeclared values** (``xml-inline``): a value of an undeclared parameter or tool stays
  text (transformers' rule) where GLM reads JSON; compared as text here;
* **what needs the request's tools**: Mistral v11's text-level id (``NAME`` + 9
  alphanumerics before ``[ARGS]``), llama3_json calls after content;
* **llama3_json's other spellings**: ``arguments`` for ``parameters`` (a transform names one
  path), calls separated by whitespace or nothing (a region ends only at its closer).

Each exclusion is checked to be real: an excluded case does parse differently; and the
README's count of the cases that give the family's calls is checked to be this one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import regex
from hf_testing import shipped

from toolcall import ParserContext, Vocabulary
from toolcall.contract import check_stream
from toolcall.registry import Registry
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_hf_response_template import HfParser

#: Each family corpus and the template that writes its format.
FAMILIES = {
    "hermes": "hermes",
    "glm45": "glm",
    "glm47": "glm",
    "mistral": "mistral_v11",
    "llama3_json": "llama3_json",
}
#: Mistral's tokenizers before v11 write the list format.
PRE_V11 = ("mistral-v3", "mistral-tekken")
CASES = [(family, case) for family in FAMILIES for case in load_cases(shipped_case_dirs(family))[0]]


def template_name(family: str, case: Case) -> str:
    if family == "mistral" and case.tokenizer in PRE_V11:
        return "mistral"
    return FAMILIES[family]


def hf_for(family: str, case: Case) -> HfParser:
    template = shipped(template_name(family, case))
    return HfParser(
        ParserContext(
            request=case.request_view(),
            vocabulary=Vocabulary(metadata={"response_template": template}),
        )
    )


#: The reason of the exclusions where the parses may also agree (a defect's text may be
#: skipped by both).
MAY_AGREE = "a defect or a truncation inside non-JSON arguments"


def cannot_express(family: str, case: Case) -> str | None:
    """Why the region spec cannot give this case the family's parse (``None``: it can)."""
    name = template_name(family, case)
    fields = shipped(name)["fields"]["tool_calls"]
    text = case.text
    # missing-end is the template's too (a region its closer does not end by the output's),
    # but a region ends only at its closer: not at the next opener.
    recoveries = [event for event in case.expected.recoveries if event != "missing-end"]
    if recoveries:
        return "a recovery: " + ", ".join(recoveries)
    opener, closer = fields.get("open"), fields.get("close")
    if "missing-end" in case.expected.recoveries and isinstance(opener, str):
        at = text.find(opener)
        while at >= 0:
            following = text.find(opener, at + len(opener))
            ended = text.find(closer, at) if isinstance(closer, str) else -1
            if following >= 0 and (ended < 0 or following < ended):
                return "a call ended by the next opener (missing-end)"
            at = following
    if name == "glm" and any(isinstance(call.arguments, str) for call in case.expected.tool_calls):
        return MAY_AGREE
    if name == "mistral" and regex.match(r"\s*(?:\[TOOL_CALLS\]\s*)+\{", text):
        return "a Mistral call object without its list (a transform reads one or the other)"
    if name == "mistral_v11" and any(
        regex.search(regex.escape(call.name) + r"[A-Za-z0-9]{9}\[ARGS\]", text)
        for call in case.expected.tool_calls
    ):
        return "a text-level Mistral id (NAME + 9 alphanumerics before [ARGS])"
    if name == "llama3_json" and case.expected.tool_calls:
        if regex.search(r'"arguments"\s*:', text) and '"parameters"' not in text:
            return "llama3_json's arguments key"
        if regex.search(r"\}\s*\{", text):
            return "llama3_json calls separated by whitespace or nothing"
        if not text.lstrip().startswith("{") and "<|python_tag|>" not in text:
            return "llama3_json calls after content"
    return None


def as_text(value: Any) -> Any:
    """A value as undeclared xml-inline values are read: text (JSON for non-strings)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def calls_of(parsed_calls: Any, family: str, case: Case) -> list[tuple[str, Any]]:
    """Names and arguments, comparable across the two parsers (see the module)."""
    out = []
    request = case.request_view()
    for call in parsed_calls:
        arguments = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                out.append((call.name, arguments))
                continue
        if template_name(family, case) == "glm" and isinstance(arguments, dict):
            tool = request.tool(call.name)
            declared = (tool.parameters or {}).get("properties", {}) if tool else {}
            arguments = {k: (v if k in declared else as_text(v)) for k, v in arguments.items()}
        out.append((call.name, arguments))
    return out


def test_the_corpora_are_there() -> None:
    families = {family for family, _ in CASES}
    assert set(FAMILIES) <= families
    assert {template_name(f, c) for f, c in CASES} == {*FAMILIES.values(), "mistral"}
    assert len(CASES) >= 80


@pytest.mark.parametrize(("family", "case"), CASES, ids=[case.id for _, case in CASES])
def test_hf_reads_the_family_corpus_with_its_template(family: str, case: Case) -> None:
    hf = hf_for(family, case)
    parsed, violations = check_stream(hf, [step.text for step in case.steps])
    assert violations == [], violations[:3]
    why = cannot_express(family, case)
    if why is not None:
        return
    ours = calls_of(parsed.tool_calls, family, case)
    assert ours == calls_of(case.expected.tool_calls, family, case), f"{case.id}: {ours}"
    own = _family_parser(family)
    if own is not None:
        theirs = own(ParserContext(request=case.request_view(), vocabulary=case.vocabulary()))
        assert ours == calls_of(theirs.parse(case.text).tool_calls, family, case)


def test_some_cases_the_spec_cannot_express_and_they_do_differ() -> None:
    """The exclusions above are not an escape hatch: each excluded case does differ."""
    excluded = [(f, c) for f, c in CASES if cannot_express(f, c) not in (None, MAY_AGREE)]
    assert excluded
    for family, case in excluded:
        ours = calls_of(hf_for(family, case).parse(case.text).tool_calls, family, case)
        assert ours != calls_of(case.expected.tool_calls, family, case), case.id


def _family_parser(family: str) -> Any:
    registry = Registry.load()
    if family not in registry.names():
        return None
    return registry.get(family)


def test_the_readme_counts_the_cases_as_they_are() -> None:
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text("utf-8").split())
    found = regex.search(
        r"(\d+) cases of the hermes, glm45, glm47, mistral and llama3_json corpora; (\d+) give "
        r"the family's calls through `hf`, and each of the other (\d+)",
        readme,
    )
    assert found is not None
    expressed = sum(cannot_express(family, case) is None for family, case in CASES)
    assert [int(number) for number in found.groups()] == [
        len(CASES),
        expressed,
        len(CASES) - expressed,
    ]
