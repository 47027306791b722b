"""Kimi: K2's tool-call section, K3's XTML tags, and K2 Horizon.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.kimi import KimiK2Grammar
from ..tools.xml_respelled import K2HorizonGrammar
from ..tools.xtml import KimiK3Grammar, xtml_tag
from .profile import Profile, row, tags
from .spellers import arg_tag_call, kimi_call, kimi_k3_call
from .worked import PARIS, WorkedExample, example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")


#: Kimi K3 XTML channel tags: three tokens each, ``<|open|>`` / ``<|close|>`` + word + ``<|sep|>``
K3_THINK = (xtml_tag(True, "think"), xtml_tag(False, "think"))


K3_TOOLS = (xtml_tag(True, "tools"), xtml_tag(False, "tools"))


K3_RESPONSE = (xtml_tag(True, "response"), xtml_tag(False, "response"))


K3_MESSAGE_END = xtml_tag(False, "message")


_K2H = arg_tag_call("ifm|")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "kimi-k2", reasoning=THINK, optional=frozenset(THINK), tool_open=KIMI_SECTION[0], tool_close=KIMI_SECTION[1],
            grammar=KimiK2Grammar, tool_ends_reasoning=True,
            description="Kimi-K2 (Instruct, Thinking): `<|tool_call_begin|>functions.name:idx<|tool_call_argument_begin|>{json}`",
        ),
        aliases=("kimi-k2-thinking", "kimi_k2"),
        example=WorkedExample(
            text="<think>Weather in Paris.</think>Checking." + KIMI_SECTION[0]
                 + kimi_call("get_weather", [("location", "Paris")], 0) + KIMI_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=kimi_call, block=KIMI_SECTION, block_per_call=False, think=THINK,
            # Kimi-K2's tokenizer_config.json
            special_ids={
                "[BOS]": 163584, "[EOS]": 163585, "<|im_end|>": 163586, "<|im_user|>": 163587,
                "<|im_assistant|>": 163588, "<|im_system|>": 163594, "<|tool_calls_section_begin|>": 163595,
                "<|tool_calls_section_end|>": 163596, "<|tool_call_begin|>": 163597,
                "<|tool_call_argument_begin|>": 163598, "<|tool_call_end|>": 163599, "<|im_middle|>": 163601,
                "<think>": 163606, "</think>": 163607,
            },
            control=frozenset({"[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>",
                               "<|im_middle|>"}),
            vocab_size=163840,
        ),
    ),
    row(
        TagDialect(
            "kimi-k3", reasoning=K3_THINK, tool_open=K3_TOOLS[0], tool_close=K3_TOOLS[1], grammar=KimiK3Grammar,
            wrappers=(K3_RESPONSE,), wrapper_opened_by_prompt=True, end_tags=(K3_MESSAGE_END,),
            text_tags=tags(*K3_THINK, *K3_TOOLS),
            description="Kimi K3: XTML `<|open|>think<|sep|>`, answer in `<|open|>response<|sep|>`, "
                        '`<|open|>call tool="N"<|sep|><|open|>argument key="k" type=".."<|sep|>v...` (multi-token tags)',
        ),
        aliases=("kimi_k3",),
        example=example(
            xtml_tag(True, "think") + "Weather in Paris." + xtml_tag(False, "think") + xtml_tag(True, "response") + "Checking."
            + xtml_tag(False, "response") + xtml_tag(True, "tools") + weather(kimi_k3_call) + xtml_tag(False, "tools")
            + xtml_tag(False, "message"),
            "Weather in Paris.", "Checking.", kimi_k3_call, (xtml_tag(True, "tools"), xtml_tag(False, "tools")),
            block_per_call=False, think=(xtml_tag(True, "think"), xtml_tag(False, "think")),
            say=(xtml_tag(True, "response"), xtml_tag(False, "response")),
            # the K3 added-token IDs of a public K3 tokenizer-conversion test's config (163584
            # [BOS] ..., Kimi K2's layout; not checked against the model's own tokenizer config):
            # every tag is <|open|> / <|close|> + word + <|sep|>
            special_ids={"[BOS]": 163584, "[EOS]": 163585, "<|end_of_msg|>": 163586, "<|open|>": 163587,
                         "<|close|>": 163588, "<|sep|>": 163589},
            control=frozenset({"[BOS]", "[EOS]", "<|end_of_msg|>"}), vocab_size=163840,
        ),
    ),
    row(
        TagDialect(
            "k2-horizon", reasoning=("<ifm|think>", "</ifm|think>"), start="reasoning", tool_open="<ifm|tool_calls>",
            tool_close="</ifm|tool_calls>", grammar=K2HorizonGrammar, tool_ends_reasoning=True,
            description="K2 Horizon: `<ifm|think>`, `<ifm|tool_calls><ifm|tool_call>name<ifm|arg_key>k...`",
        ),
        aliases=("k2_horizon",),
        example=example(
            "Weather in Paris.</ifm|think>Checking.<ifm|tool_calls>" + weather(_K2H) + "</ifm|tool_calls>",
            "Weather in Paris.", "Checking.", _K2H, ("<ifm|tool_calls>", "</ifm|tool_calls>"), block_per_call=False,
            think=("<ifm|think>", "</ifm|think>"),
            # stand-in IDs
            special_ids=stand_in("<ifm|think>", "</ifm|think>", "<ifm|tool_calls>", "</ifm|tool_calls>",
                                  "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>", "</ifm|arg_key>",
                                  "<ifm|arg_value>", "</ifm|arg_value>"),
        ),
    ),
)
