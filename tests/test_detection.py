"""Profile detection: ``tokenparse.detect`` and ``tokenparse.load("auto", tokenizer=...)``.

Two kinds of tokenizer: every tokenizer the package bundles (real vocabularies), and a
small Hugging Face ``tokenizers`` tokenizer per family that has exactly that family's added
tokens, with a chat-template excerpt written the way the family's template writes a call.
"""
from __future__ import annotations

import json

import pytest

import tokenparse
from tokenparse.detection import RULES, Rule, register_rule

tokenizers = pytest.importorskip("tokenizers")

#: family -> (added tokens, chat template excerpt); the excerpts quote how each family's
#: template writes a tool call or opens thinking
FAMILIES: dict[str, tuple[tuple[str, ...], str]] = {
    "qwen3": (
        ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"),
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        "{%- if enable_thinking is false %}<think>\n\n</think>\n\n{%- endif %}",
    ),
    "qwen3-coder": (
        ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"),
        "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>",
    ),
    "qwen3.5": (
        ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"),
        "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\n"
        "{{- '<|im_start|>assistant\\n<think>\\n' }}",
    ),
    "deepseek-r1": (
        ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<think>", "</think>"),
        # DeepSeek-R1's template (the R1-Distill copy llama.cpp keeps in models/templates)
        "{{'\\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + "
        "'```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + '<｜tool▁call▁end｜>'}}"
        "{%- if add_generation_prompt and not ns.is_tool -%}{{'<｜Assistant｜><think>\\n'}}",
    ),
    "deepseek-v3": (
        ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"),
        # the call line DeepSeek-V3's template shares with R1's (above), without the <think> prompt
        "{{'\\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\\n' + "
        "'```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + '<｜tool▁call▁end｜>'}}",
    ),
    "deepseek-v3.1": (
        ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<think>", "</think>"),
        # DeepSeek-V3.1's template (llama.cpp models/templates/deepseek-ai-DeepSeek-V3.1.jinja)
        "{{'<｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>' + tool['function']['arguments'] + "
        "'<｜tool▁call▁end｜>'}}{%- if not thinking -%}{{'</think>'}}\n    {%- else -%}{{'<think>'}}",
    ),
    "deepseek-v3.2": (("｜DSML｜", "<think>", "</think>"), "<｜DSML｜function_calls>\n<｜DSML｜invoke name="),
    "deepseek-v4": (("｜DSML｜", "<think>", "</think>"), "<｜DSML｜tool_calls>\n<｜DSML｜invoke name= <think>"),
    "glm-4.5": (
        ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<think>", "</think>"),
        # GLM-4.5 / 4.6's template (llama.cpp models/templates/glm_4_5.jinja)
        "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n"
        "<|assistant|>{{- '\\n<think></think>' if (enable_thinking is defined and not enable_thinking) else '' -}}",
    ),
    "glm-4.7": (
        ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<think>", "</think>"),
        "{{- '<|assistant|><think>' }}",
    ),
    "kimi-k2": (
        ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
         "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<think>", "</think>"),
        "",
    ),
    "mistral": (("[INST]", "[/INST]", "[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]"), ""),
    "llama3": (("<|begin_of_text|>", "<|eot_id|>", "<|python_tag|>"), ""),
    # MiniMax-M2's template (llama.cpp models/templates/unsloth-MiniMax-M2.jinja)
    "minimax-m2": (("<think>", "</think>"), "{%- set toolcall_begin_token   = '<minimax:tool_call>'         -%}\n"
                   "{{- '\\n' ~ toolcall_begin_token }}\n<invoke name=\"tool-name-1\">\n"
                   "{{- ']~b]ai' ~ '\\n' ~ '<think>' ~ '\\n' }}"),
    # the further families: their added tokens, and for those with look-alikes a template excerpt
    "seed-oss": (("<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"), ""),
    "longcat": (("<longcat_tool_call>", "</longcat_tool_call>"), ""),
    "jamba": (("<|startoftext|>", "<tool_calls>", "</tool_calls>"), ""),
    "minimax-m1": (("<think>", "</think>", "<tool_calls>", "</tool_calls>"), "<tool_calls>\n{\"name\": <tool-name>"),
    "internlm2": (("<|im_start|>", "<|im_end|>", "<|action_start|>", "<|action_end|>", "<|plugin|>", "<|interpreter|>"),
                  "<|action_start|><|plugin|>"),
    "intern-s1": (("<|im_start|>", "<|im_end|>", "<|action_start|>", "<|action_end|>", "<|plugin|>"), "<think>\n"),
    "granite4": (("<|start_of_role|>", "<|end_of_role|>"), "<tool_call>\n{\"name\": "),
    "granite-3": (("<|start_of_role|>", "<|end_of_role|>", "<|tool_call|>"), ""),
    "granite-20b-fc": ((), "<function_call> {\"name\": "),
    "phi-4-mini": (("<|tool|>", "<|/tool|>"), "functools[{\"name\": "),
    "cohere-command": (("<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>"), ""),
    "llama4-json": (("<|begin_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|python_start|>",
                     "<|python_end|>"), '{"name": function name, "parameters": dictionary of argument name'),
    "llama4-pythonic": (("<|begin_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|python_start|>",
                         "<|python_end|>"), "[func_name1(params_name1=params_value1, params_name2=params_value2...)"),
    "pythonic": (("<|begin_of_text|>", "<|eot_id|>", "<|python_tag|>"),
                 "[func_name1(params_name1=params_value1, params_name2=params_value2...)"),
    "lfm2": (("<|startoftext|>", "<|im_start|>", "<|im_end|>", "<|tool_call_start|>", "<|tool_call_end|>"), ""),
    "olmo3": (("<|im_start|>", "<|im_end|>"), "<function_calls>"),
    "gemma4": (("<|tool_call>", "<tool_call|>", "<|channel>", "<channel|>", '<|"|>'), ""),
    "functiongemma": (("<start_function_call>", "<end_function_call>", "<escape>"), ""),
    "step3": (("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>",
               "<｜tool_sep｜>"), ""),
    "gigachat3": (("<|role_sep|>", "<|message_sep|>"), "function call<|role_sep|>\n"),
    "gigachat3.5": (("<|role_sep|>", "<|message_sep|>"), "<｜GCML｜tool_calls>"),
    "hy-v3": (("<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>", "<arg_key>", "</arg_key>",
               "<arg_value>", "</arg_value>", "<think>", "</think>"), ""),
    "apertus": (("<|tools_prefix|>", "<|tools_suffix|>"), ""),
    # Hunyuan-A13B-Instruct's special tokens and template fragments (its tags are text)
    "hunyuan-a13b": (("<|startoftext|>", "<|extra_0|>", "<|extra_4|>", "<|eos|>"),
                     "如果你决定调用任何函数，你必须将其格式化为<tool_calls>[{\\\"name\\\": ...以助手：开头"),
    "ernie-4.5": (("<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>"), ""),
    # the recent families
    "deepseek-v4.1": (("｜DSML｜", "<think>", "</think>"), "<｜DSML｜ calls>\n<｜DSML｜ invoke name= {{ message['tool_calls'] }}"),
    "dots": (("<|im_start|>", "<|im_end|>"), "<dots_function_call>\n<invoke name="),
    "minicpm5": (("<|im_start|>", "<|im_end|>"), '<function name="get_weather"><param name="city">'),
    "hy-v4": (("<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
               "<arg_value>", "</arg_value>", "<think>", "</think>"), ""),
    "k2-horizon": (("<ifm|think>", "</ifm|think>", "<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>",
                    "</ifm|tool_call>", "<ifm|arg_key>", "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>"), ""),
    "minimax-m3": (("]<]minimax[>[", "<mm:think>", "</mm:think>"), ""),
    "plamo3": (("<|plamo:tag|>", "<|plamo:msg|>", "<|plamo:constrain|>", "<|plamo:begin_", "<|plamo:end_", ":plamo|>"),
               ""),
    "solar-open2": (("<|think:start|>", "<|think:end|>", "<|tool_call:start|>", "<|tool_call:end|>",
                     "<|tool_arg:start|>", "<|tool_arg:value|>", "<|tool_arg:end|>"), ""),
}


def family_tokenizer(added: tuple[str, ...]):
    """A byte-level BPE tokenizer (256 byte tokens, no merges) plus the given added tokens."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    from tokenparse.tokenizers.hf import bytes_to_unicode

    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_tokens([AddedToken(lit, special=lit.startswith(("<|", "[", "<｜"))) for lit in added])
    return tok


class _WithTemplate:
    """A transformers-like tokenizer object: the HF backend plus ``chat_template``."""

    def __init__(self, backend, chat_template: str | None) -> None:
        self.backend_tokenizer = backend
        self.chat_template = chat_template
        self.name_or_path = "family-test"


def test_every_builtin_profile_has_a_rule():
    assert {r.profile for r in RULES} == set(tokenparse.profile_names())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_tokenizer_with_its_template_detects_exactly_its_profile(family):
    added, template = FAMILIES[family]
    tok = _WithTemplate(family_tokenizer(added), template or None)
    candidates = tokenparse.detect(tok)
    assert [c.profile for c in candidates] == [family], candidates
    model = tokenparse.load("auto", tokenizer=tok)
    assert model.name == family
    # the evidence names the token IDs it relied on
    table = model.table
    for literal in next(r for r in RULES if r.profile == family).tokens:
        assert f"token {literal} = {table.added[literal]}" in candidates[0].evidence


@pytest.mark.parametrize("family", ["qwen3", "qwen3-coder", "qwen3.5"])
def test_qwen_look_alikes_share_tokens_and_differ_by_template_only(family):
    added, _ = FAMILIES[family]
    tok = family_tokenizer(added)  # no chat template at all
    found = {c.profile for c in tokenparse.detect(tok)}
    assert {"qwen3", "qwen3-coder", "qwen3.5"} <= found
    with pytest.raises(tokenparse.DetectionError) as info:
        tokenparse.load("auto", tokenizer=tok)
    message = str(info.value)
    assert "no chat template" in message and "qwen3-coder" in message and "qwen3.5" in message
    assert {c.profile for c in info.value.candidates} == found
    for other, (_, template) in FAMILIES.items():  # each template picks its own row
        if other.startswith("qwen"):
            assert [c.profile for c in tokenparse.detect(tok, chat_template=template)] == [other]


def test_unknown_tokenizer_is_a_clear_error():
    tok = family_tokenizer(("<|im_start|>", "<|im_end|>"))
    assert tokenparse.detect(tok) == []
    with pytest.raises(tokenparse.DetectionError, match="no built-in profile fits") as info:
        tokenparse.load("auto", tokenizer=tok)
    assert isinstance(info.value, tokenparse.TokenParseError)
    assert info.value.candidates == []


def test_text_spelled_tags_are_not_evidence():
    """A vocabulary that can only spell ``<tool_call>`` with ordinary tokens is no Qwen."""
    tok = family_tokenizer(("<|im_start|>",))
    assert tokenparse.detect(tok, chat_template=FAMILIES["qwen3"][1]) == []


def test_bundled_gpt_oss_tokenizer():
    candidates = tokenparse.detect(tokenparse.load("gpt-oss").table)
    assert [c.profile for c in candidates] == ["gpt-oss"]
    assert "token <|channel|> = 200005" in candidates[0].evidence


def test_model_type_decides_gpt_oss(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt_oss"}))
    family_tokenizer(("<|im_start|>",)).save(str(tmp_path / "tokenizer.json"))
    assert [c.profile for c in tokenparse.detect(tmp_path)] == ["gpt-oss"]
    assert tokenparse.detect(tmp_path, model_type="qwen3") == []


@pytest.mark.parametrize("variant", ["qwen3", "qwen3.5"])
def test_bundled_qwen_tokenizers(variant):
    from tokenparse.tokenizers import qwen_table

    table = qwen_table(variant)
    assert table.added["<tool_call>"] == (151657 if variant == "qwen3" else table.added["<tool_call>"])
    without = {c.profile for c in tokenparse.detect(table)}
    assert {"qwen3", "qwen3-coder", "qwen3.5"} <= without
    for family in ("qwen3", "qwen3-coder", "qwen3.5"):
        assert [c.profile for c in tokenparse.detect(table, chat_template=FAMILIES[family][1])] == [family]


def test_bundled_deepseek_v4_tokenizer():
    from tokenparse.tokenizers import deepseek_v4_table

    table = deepseek_v4_table()
    assert "deepseek-v4" in {c.profile for c in tokenparse.detect(table)}
    chosen = tokenparse.detect(table, chat_template=FAMILIES["deepseek-v4"][1])
    assert [c.profile for c in chosen] == ["deepseek-v4"]


def test_bundled_tekken_tokenizer():
    table = tokenparse.load("mistral").table
    assert [c.profile for c in tokenparse.detect(table)] == ["mistral"]


def test_model_folder_gives_its_template(tmp_path):
    added, template = FAMILIES["qwen3-coder"]
    family_tokenizer(added).save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    assert tokenparse.load("auto", tokenizer=tmp_path).name == "qwen3-coder"
    (tmp_path / "chat_template.jinja").write_text(FAMILIES["qwen3"][1])  # the file wins
    assert tokenparse.load("auto", tokenizer=str(tmp_path)).name == "qwen3"


def test_register_rule_adds_a_row():
    saved = list(RULES)
    try:
        register_rule(Rule("llama3", tokens=("<|im_start|>", "<|custom_call|>")))
        tok = family_tokenizer(("<|im_start|>", "<|custom_call|>"))
        assert [c.profile for c in tokenparse.detect(tok)] == ["llama3"]
        assert len([r for r in RULES if r.profile == "llama3"]) == 1
    finally:
        RULES[:] = saved


def test_parsing_after_auto_load_uses_token_ids():
    added, template = FAMILIES["qwen3"]
    hf = family_tokenizer(added)
    model = tokenparse.load("auto", tokenizer=_WithTemplate(hf, template))
    ids = hf.encode("<think>plan</think>").ids + hf.encode('<tool_call>{"name": "f", "arguments": {}}</tool_call>').ids
    message = model.parse(ids)
    assert message.reasoning == "plan"
    assert [c.function.name for c in message.tool_calls] == ["f"]
    spelled = [t for ch in "<tool_call>" for t in hf.encode(ch).ids]  # the tag written with byte tokens
    assert model.parse(spelled).content == "<tool_call>"


def test_template_only_rows_need_the_template():
    # phi-4-mini, granite-20b-fc, olmo3 and pythonic tags are text: only a template says so
    tok = family_tokenizer(("<|im_start|>", "<|im_end|>"))
    assert tokenparse.detect(tok) == []
    found = [c.profile for c in tokenparse.detect(tok, chat_template="<function_calls>\n")]
    assert found == ["olmo3"]


def test_xlam_is_never_guessed():
    rule = next(r for r in RULES if r.profile == "xlam")
    assert not rule.tokens and not rule.template  # xLAM writes no tag: name the profile
    tok = family_tokenizer(())
    assert "xlam" not in {c.profile for c in tokenparse.detect(tok, chat_template='[{"name": "f"}]')}


def test_holo2_is_found_as_qwen3_and_named_for_its_default():
    """Holo2's tokenizer is Qwen3-VL's: detection names qwen3; the holo2 row is chosen by name."""
    added, template = FAMILIES["qwen3"]
    tok = _WithTemplate(family_tokenizer(added), template)
    assert [c.profile for c in tokenparse.detect(tok)] == ["qwen3"]
    model = tokenparse.load("holo2", tokenizer=tok)
    assert model.name == "holo2" and model.dialect.start_mode(None) == "reasoning"


def test_beam_by_its_template_or_model_type():
    """Beam shares Harmony's tokens; its chat template (an ``<rfl:parameter>`` per argument)
    or ``model_type`` "beam" picks the row, and a template without it stays gpt-oss."""
    table = tokenparse.load("gpt-oss").table
    beam_template = ('{%- for k, v in args.items() %}<rfl:parameter name="{{ k }}">\\n{{ v }}\\n</rfl:parameter>'
                     "{%- endfor %}<|constrain|>xml<|message|>")
    assert [c.profile for c in tokenparse.detect(table, chat_template=beam_template)] == ["beam"]
    assert [c.profile for c in tokenparse.detect(table, chat_template="<|constrain|>json<|message|>")] == ["gpt-oss"]
    assert [c.profile for c in tokenparse.detect(table, model_type="beam")] == ["beam"]
