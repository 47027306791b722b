"""Every registered text-tag dialect, end to end through every adapter and SDK accumulator.

Each dialect gets one example in its own wire format: reasoning (where the dialect has
it), a preamble with non-ASCII text, a call to ``get_weather``, a call to ``delete_all``
(not offered: the parser filters it) and a call to ``add``. Profiles that ship a tokenizer
use it (real IDs); the others get a byte-level table carrying the dialect's tags as added
tokens, so tags are single IDs and every non-ASCII character spans several tokens.
"""
from __future__ import annotations

import itertools
import json
import re

import pytest
from streaming import chunk_sizes
from test_adapters_e2e import ADD, WEATHER, check_all_adapters

import tokenparse
from registry_models import row_model
from tokenparse.dialects.registry import get_profile, profile_names
from tokenparse.tokenizers.table import TokenTable

REASONING = "Need 天気 for 東京, then a sum 🤔."
PREAMBLE = "Je vérifie — 少々お待ちください。"
CALLS = [("get_weather", {"location": "東京"}), ("delete_all", {"path": "/"}), ("add", {"x": 2, "y": 3.5})]
OFFERED = [WEATHER, ADD]
EXPECTED_CALLS = [("get_weather", {"location": "東京"}), ("add", {"x": 2, "y": 3.5})]


def _json(args):
    return json.dumps(args, ensure_ascii=False)


def _xml_params(args, open_fmt, close):
    return "".join(f"{open_fmt.format(k=k)}{v}{close}" for k, v in args.items())


# dialect -> (completion text, special literals used as single tokens, EOS literal or None)
def _examples():
    think = f"<think>{REASONING}</think>"
    reasoning_only = f"{REASONING}</think>"  # templates that open <think> in the prompt
    qwen_json = "".join(f'<tool_call>\n{{"name": "{n}", "arguments": {_json(a)}}}\n</tool_call>\n' for n, a in CALLS)
    qwen_xml = "".join(
        f"<tool_call>\n<function={n}>\n"
        + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items())
        + "</function>\n</tool_call>\n"
        for n, a in CALLS
    )
    ds_v3 = (
        "<｜tool▁calls▁begin｜>"
        + "".join(
            f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_json(a)}\n```<｜tool▁call▁end｜>" for n, a in CALLS
        )
        + "<｜tool▁calls▁end｜>"
    )
    ds_v31 = (
        "<｜tool▁calls▁begin｜>"
        + "".join(f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_json(a)}<｜tool▁call▁end｜>" for n, a in CALLS)
        + "<｜tool▁calls▁end｜>"
    )

    def dsml(block):
        invokes = "".join(
            f'<｜DSML｜invoke name="{n}">\n'
            + "".join(
                f'<｜DSML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
                f"{v if isinstance(v, str) else json.dumps(v)}</｜DSML｜parameter>\n"
                for k, v in a.items()
            )
            + "</｜DSML｜invoke>\n"
            for n, a in CALLS
        )
        return f"\n\n<｜DSML｜{block}>\n{invokes}</｜DSML｜{block}>"

    glm = "".join(
        f"<tool_call>{n}\n"
        + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v if isinstance(v, str) else json.dumps(v)}</arg_value>\n"
                  for k, v in a.items())
        + "</tool_call>"
        for n, a in CALLS
    )
    kimi = (
        "<|tool_calls_section_begin|>"
        + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_json(a)}<|tool_call_end|>"
            for i, (n, a) in enumerate(CALLS)
        )
        + "<|tool_calls_section_end|>"
    )
    # tekken_240911 (the bundled tokenizer) has no [ARGS]/[THINK]: the JSON-array form
    mistral = "[TOOL_CALLS]" + json.dumps([{"name": n, "arguments": a} for n, a in CALLS], ensure_ascii=False)
    minimax = (
        "<minimax:tool_call>\n"
        + "".join(
            f'<invoke name="{n}">\n'
            + "".join(f'<parameter name="{k}">{v if isinstance(v, str) else json.dumps(v)}</parameter>\n'
                      for k, v in a.items())
            + "</invoke>\n"
            for n, a in CALLS
        )
        + "</minimax:tool_call>"
    )
    ds_specials = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
                   "<｜tool▁calls▁end｜>", "<think>", "</think>"]
    return {
        "qwen3": (f"{think}\n\n{PREAMBLE}\n{qwen_json}", ["<think>", "</think>", "<tool_call>", "</tool_call>"], True),
        "qwen3-coder": (f"{PREAMBLE}\n{qwen_xml}", ["<tool_call>", "</tool_call>"], False),
        "qwen3.5": (f"{reasoning_only}\n\n{PREAMBLE}\n{qwen_xml}", ["<think>", "</think>", "<tool_call>", "</tool_call>"],
                    True),
        "deepseek-r1": (f"{reasoning_only}{PREAMBLE}{ds_v3}", ds_specials, True),
        "deepseek-v3": (f"{PREAMBLE}{ds_v3}", ds_specials, False),
        "deepseek-v3.1": (f"{PREAMBLE}{ds_v31}", ds_specials, False),
        # "｜DSML｜" is one added token in DeepSeek's tokenizers; the tags around it are text
        "deepseek-v3.2": (f"{reasoning_only}{PREAMBLE}{dsml('function_calls')}", ["<think>", "</think>", "｜DSML｜"],
                          True),
        "deepseek-v4": (f"{reasoning_only}{PREAMBLE}{dsml('tool_calls')}", ["<think>", "</think>", "｜DSML｜"], True),
        "glm-4.5": (f"{think}{PREAMBLE}{glm}", ["<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>",
                                              "</arg_key>", "<arg_value>", "</arg_value>"], True),
        "glm-4.7": (f"{reasoning_only}{PREAMBLE}{glm}", ["<think>", "</think>", "<tool_call>", "</tool_call>",
                                                        "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], True),
        "kimi-k2": (f"{think}{PREAMBLE}{kimi}", ["<think>", "</think>", "<|tool_calls_section_begin|>",
                                                 "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                                                 "<|tool_call_argument_begin|>", "<|tool_call_end|>"], True),
        "mistral": (f"{PREAMBLE}{mistral}", ["[TOOL_CALLS]"], False),
        "llama3": ('<|python_tag|>{"name": "get_weather", "parameters": {"location": "東京"}}', ["<|python_tag|>"], False),
        "minimax-m2": (f"{reasoning_only}\n{PREAMBLE}\n{minimax}", ["<think>", "</think>", "<minimax:tool_call>",
                                                                     "</minimax:tool_call>"], True),
    }


def _more_examples():
    """The further families (``tokenparse.dialects``), same calls, same checks."""
    think = f"<think>{REASONING}</think>"
    reasoning_only = f"{REASONING}</think>"

    def value(v):
        return v if isinstance(v, str) else json.dumps(v)

    def envelopes(name_key="name", args_key="arguments", sep=""):
        return sep.join(f'{{"{name_key}": "{n}", "{args_key}": {_json(a)}}}' for n, a in CALLS)

    def pythonic(sep=", "):
        return sep.join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in CALLS)

    def xml(call_open, call_close, param_open, param_close, sep=""):
        return "".join(
            call_open.format(n=n) + "".join(param_open.format(k=k) + value(v) + param_close for k, v in a.items())
            + call_close + sep
            for n, a in CALLS
        )

    def gemma(open_, close, quote):
        def arg(v):
            return f"{quote}{v}{quote}" if isinstance(v, str) else json.dumps(v)

        return "".join(f"{open_}call:{n}{{" + ",".join(f"{k}:{arg(v)}" for k, v in a.items()) + f"}}{close}"
                       for n, a in CALLS)

    seed = xml("<seed:tool_call>\n<function={n}>\n", "</function>\n</seed:tool_call>", "<parameter={k}>\n",
               "\n</parameter>\n")
    step3 = "<｜tool_calls_begin｜>" + "".join(
        f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{n}">'
        + "".join(f'<steptml:parameter name="{k}">{value(v)}</steptml:parameter>' for k, v in a.items())
        + "</steptml:invoke><｜tool_call_end｜>"
        for n, a in CALLS
    ) + "<｜tool_calls_end｜>"
    gcml = "<｜GCML｜tool_calls>" + "".join(
        f'<｜GCML｜invoke name="{n}">'
        + "".join(f'<｜GCML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">{value(v)}'
                  "</｜GCML｜parameter>" for k, v in a.items())
        + "</｜GCML｜invoke>"
        for n, a in CALLS
    ) + "</｜GCML｜tool_calls>"
    hy = "<tool_calls>" + xml("<tool_call>{n}<tool_sep>", "</tool_call>", "<arg_key>{k}</arg_key><arg_value>",
                              "</arg_value>") + "</tool_calls>"
    hy_tags = ["<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>",
               "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]
    action = "".join(f'<|action_start|><|plugin|>\n{{"name": "{n}", "parameters": {_json(a)}}}<|action_end|>'
                     for n, a in CALLS)
    action_tags = ["<|action_start|>", "<|plugin|>", "<|action_end|>"]
    keyed = "[" + ", ".join(f'{{"{n}": {_json(a)}}}' for n, a in CALLS) + "]"
    return {
        "seed-oss": (f"<seed:think>{REASONING}</seed:think>{PREAMBLE}{seed}",
                     ["<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"], True),
        "longcat": (PREAMBLE + "".join(f"<longcat_tool_call>{e}</longcat_tool_call>" for e in envelopes(sep="\0").split("\0")),
                    ["<longcat_tool_call>", "</longcat_tool_call>"], False),
        "jamba": (f"{PREAMBLE}<tool_calls>[{envelopes(sep=', ')}]</tool_calls>", ["<tool_calls>", "</tool_calls>"], False),
        "minimax-m1": (f"{reasoning_only}\n{PREAMBLE}\n<tool_calls>\n{envelopes(sep=chr(10))}\n</tool_calls>",
                       ["<think>", "</think>", "<tool_calls>", "</tool_calls>"], True),
        "internlm2": (PREAMBLE + action, action_tags, False),
        "intern-s1": (think + PREAMBLE + action, ["<think>", "</think>", *action_tags], True),
        "granite-20b-fc": (PREAMBLE + "".join(f" <function_call> {e}" for e in envelopes(sep="\0").split("\0")), [],
                           False),
        "granite4": (PREAMBLE + "".join(f"<tool_call>{e}</tool_call>" for e in envelopes(sep="\0").split("\0")),
                     ["<tool_call>", "</tool_call>"], False),
        "granite-3": (f"{PREAMBLE}<|tool_call|>[{envelopes(sep=', ')}]", ["<|tool_call|>"], False),
        "phi-4-mini": (f"{PREAMBLE} functools[{envelopes(sep=', ')}]", [], False),
        "cohere-command": (f"<|START_THINKING|>{REASONING}<|END_THINKING|>{PREAMBLE}<|START_ACTION|>["
                           + envelopes("tool_name", "parameters", ", ") + "]<|END_ACTION|>",
                           ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>"], True),
        "llama4-json": ('{"name": "get_weather", "parameters": {"location": "東京"}}', [], False),
        "llama4-pythonic": (f"{PREAMBLE}<|python_start|>[{pythonic()}]<|python_end|>",
                            ["<|python_start|>", "<|python_end|>"], False),
        "pythonic": (f"[{pythonic()}]", [], False),
        "xlam": (f"[{envelopes(sep=', ')}]", [], False),
        "lfm2": (f"{think}{PREAMBLE}<|tool_call_start|>[{pythonic()}]<|tool_call_end|>",
                 ["<think>", "</think>", "<|tool_call_start|>", "<|tool_call_end|>"], True),
        "olmo3": (f"{think}{PREAMBLE}<function_calls>\n{pythonic(chr(10))}\n</function_calls>", [], True),
        "gemma4": (f"<|channel>thought\n{REASONING}<channel|>{PREAMBLE}" + gemma("<|tool_call>", "<tool_call|>", '<|"|>'),
                   ["<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", '<|"|>'], True),
        "functiongemma": (PREAMBLE + gemma("<start_function_call>", "<end_function_call>", "<escape>"),
                          ["<start_function_call>", "<end_function_call>", "<escape>"], False),
        "step3": (f"{reasoning_only}{PREAMBLE}{step3}",
                  ["<think>", "</think>", "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>",
                   "<｜tool_call_end｜>", "<｜tool_sep｜>"], True),
        "gigachat3": (f"{PREAMBLE}function call<|role_sep|>\n{envelopes(sep=chr(10))}", ["<|role_sep|>"], False),
        "gigachat3.5": (PREAMBLE + gcml, [], False),
        "hy-v3": (think + PREAMBLE + hy, hy_tags, True),
        "apertus": (f"{PREAMBLE}<|tools_prefix|>{keyed}<|tools_suffix|>", ["<|tools_prefix|>", "<|tools_suffix|>"],
                    False),
    }


#: formats whose call is the whole response (no room for a preamble) / with one call only
NO_PREAMBLE = {"llama3", "llama4-json", "pythonic", "xlam"}
ONE_CALL = {"llama3", "llama4-json"}


class _Examples(dict):
    """The hand-written examples above; a registry row without one is spelled with its
    worked example's spellers (reasoning, the preamble, the three calls)."""

    def __missing__(self, name: str):
        example = get_profile(name).example
        assert example is not None, name
        text = ""
        if example.think is not None:
            text += example.spell_reasoning(REASONING)
        text += example.spell_content(PREAMBLE) + example.spell_calls([(n, list(a.items())) for n, a in CALLS])
        specials = sorted(row_model(name).table.added, key=len, reverse=True)
        self[name] = (text, specials, example.think is not None)
        return self[name]



_HAND_WRITTEN = {**_examples(), **_more_examples()}
EXAMPLES = _Examples(_HAND_WRITTEN)
for _name in profile_names():
    if _name != "gpt-oss" and _name not in EXAMPLES:
        EXAMPLES[_name]  # spelled from the row's worked example


def byte_table(specials):
    """Byte-level vocabulary (IDs 0-255) plus ``specials`` as added tokens from ID 256."""
    pieces = [bytes([b]) for b in range(256)] + [s.encode() for s in specials]
    return TokenTable(pieces, {s: 256 + i for i, s in enumerate(specials)}, name="bytes")


def encode(table, text, specials):
    """IDs for ``text``: ``specials`` as their added-token IDs, other text by the table's
    encoder (or one ID per byte for the byte table)."""
    specials = [s for s in specials if table.id_of(s) is not None]
    if not specials:  # every tag of the format is text (or it has none)
        return list(text.encode()) if table.name == "bytes" else table.encode(text)
    pattern = re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)))
    ids, pos = [], 0

    def plain(chunk):
        return list(chunk.encode()) if table.name == "bytes" else table.encode(chunk)

    for m in pattern.finditer(text):
        ids += plain(text[pos : m.start()])
        ids.append(table.id_of(m.group(0)))
        pos = m.end()
    return ids + plain(text[pos:])


def load_example(name):
    text, specials, _ = EXAMPLES[name]
    try:
        model = tokenparse.load(name)
    except tokenparse.TokenizerError:
        model = row_model(name) if name not in _HAND_WRITTEN else tokenparse.load(name, tokenizer=byte_table(specials))
    return model, encode(model.table, text, specials)


def test_every_dialect_has_an_example():
    assert set(profile_names()) - {"gpt-oss"} <= set(EXAMPLES), "add an adapter example for the new dialect"


def _sizes(n):
    return chunk_sizes(n, seeds=(0, 1))


@pytest.mark.parametrize("name", sorted(set(EXAMPLES) & set(profile_names())))
@pytest.mark.sweep("chunking", keep=("all", "size1"), extra=0)  # the default run: two (the other five: test_adapters_fast_path, test_adapters_e2e); --full: all
@pytest.mark.parametrize("chunking", ["all", "size1", "size2", "size3", "size7", "random0", "random1"])
def test_dialect_through_every_adapter(name, chunking):
    model, ids = load_example(name)
    sizes = dict(_sizes(len(ids)))[chunking]
    counter = itertools.count()
    parser = model.parser(tools=OFFERED, id_factory=lambda: f"call_{next(counter)}")
    steps, i = [], 0
    for size in sizes:
        steps.append(parser.feed(ids[i : i + size]))
        i += size
    steps.append(parser.finish())
    message = parser.result()
    # the example exercises what it claims to
    has_reasoning = EXAMPLES[name][2]
    want_calls = EXPECTED_CALLS if name not in ONE_CALL else [("get_weather", {"location": "東京"})]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == want_calls
    if has_reasoning:
        assert (message.reasoning or "").strip() == REASONING
    if name not in NO_PREAMBLE:
        assert (message.content or "").strip() == PREAMBLE
    if name not in ONE_CALL:
        assert any(d.code in ("unknown_tool", "tool_call") for d in parser.diagnostics)
    check_all_adapters(steps, message)
