"""Formats with message headers instead of one tool block: Inkling and MuseGlimmer.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_variants import InklingGrammar
from ..tools.xml_respelled import MuseAtemGrammar
from .profile import Profile, row, tags
from .spellers import inkling_call, muse_atem_call
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

#: Inkling: ``<|end_message|>`` closes every block kind; the header tags before a block's kind
INKLING_END = "<|end_message|>"


INKLING_HEADERS = (("<|message_model|>", "header"), ("<|content_text|>", "header_end"),
                   ("<|content_invoke_tool_text|>", "header_end"), ("<|content_tool_error|>", "header_end"))


#: MuseGlimmer: a message header ``<|start|>assistant to=R<|message|>``, the message's end
MUSE_HEADERS = (("<|start|>", "header"), ("<|message|>", "header_end"), ("<|eom|>", "message_end"),
                ("<|eot|>", "message_end"))


_MUSE_TOOL = ("<|start|>assistant to=functions<|message|><atem:function_calls>", "</atem:function_calls><|eom|>")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "inkling", reasoning=("<|content_thinking|>", INKLING_END), tool_open="<|content_invoke_tool_json|>",
            tool_close=INKLING_END, grammar=InklingGrammar, tool_ends_reasoning=True, header_tags=INKLING_HEADERS,
            optional=frozenset(("<|content_invoke_tool_text|>", "<|content_tool_error|>")),
            description="Inkling: `<|message_model|>[name]<|content_thinking|>` / `<|content_text|>` / "
                        '`<|content_invoke_tool_json|>{"name", "args"}`, every block ended by `<|end_message|>`',
        ),
        example=example(
            "<|content_thinking|>Weather in Paris.<|end_message|><|message_model|><|content_text|>Checking.<|end_message|>"
            "<|message_model|>get_weather<|content_invoke_tool_json|>" + weather(inkling_call)
            + "<|end_message|><|content_model_end_sampling|>",
            "Weather in Paris.", "Checking.", inkling_call, ("<|content_invoke_tool_json|>", "<|end_message|>"),
            think=("<|content_thinking|>", "<|end_message|>"), say=("<|content_text|>", "<|end_message|>"),
            # the IDs vLLM's Inkling renderer tests give as the real vocabulary's layout (not checked
            # against the tokenizer config); <|content_invoke_tool_text|> / <|content_tool_error|>:
            # stand-in IDs. The response starts in the message header the template opened
            special_ids={"<|message_model|>": 200001, "<|content_text|>": 200004, "<|content_model_end_sampling|>": 200006,
                         "<|content_thinking|>": 200008, "<|end_message|>": 200010, "<|content_invoke_tool_json|>": 200049,
                         "<|content_invoke_tool_text|>": 200050, "<|content_tool_error|>": 200051},
            control=frozenset({"<|content_model_end_sampling|>"}),
        ),
    ),
    row(
        TagDialect(
            "muse-glimmer", grammar=MuseAtemGrammar, header_tags=MUSE_HEADERS, recipients={"self": "reasoning", "user": "content"},
            tool_ends_reasoning=True,  # a message to a tool is a new message: the reasoning one has ended
            text_tags=tags(*(literal for literal, _ in MUSE_HEADERS)),
            description="MuseGlimmer: `<|start|>assistant to=self|user|TOOL<|message|>` ... `<|eom|>`; "
                        '`<atem:invoke name="N"><atem:parameter name="k">v</atem:parameter>` to a tool',
        ),
        aliases=("muse_glimmer", "muse"),
        example=example(
            " to=self<|message|>Weather in Paris.<|eom|><|start|>assistant to=user<|message|>Checking.<|eom|>"
            "<|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>" + weather(muse_atem_call)
            + "</atem:function_calls><|eom|>",
            "Weather in Paris.", "Checking.", muse_atem_call, _MUSE_TOOL,
            think=("<|start|>assistant to=self<|message|>", "<|eom|>"), say=("<|start|>assistant to=user<|message|>", "<|eot|>"),
            # stand-in IDs: the framing tokens as single added tokens (the response starts in the
            # header the prompt's <|start|>assistant opened)
            special_ids=stand_in("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
        ),
    ),
    row(
        # Muse Spark (vLLM 0.33 ``muse`` / ``musespark1x``): MuseGlimmer's framing and ATEM calls
        # with other channel semantics: a message without ``to=`` and ``to=self`` are reasoning,
        # ``to=user`` and ``to=commentary`` the answer. vLLM drops ``to=developer`` messages;
        # tokenparse drops no model text and routes them to reasoning (the side a client does not
        # show). SGLang's ``muse`` name reads MuseGlimmer's semantics (the row above).
        TagDialect(
            "muse-spark", grammar=MuseAtemGrammar, header_tags=MUSE_HEADERS,
            recipients={"": "reasoning", "self": "reasoning", "user": "content", "commentary": "content",
                        "developer": "reasoning"},
            tool_ends_reasoning=True,  # a message to a tool is a new message: the reasoning one has ended
            text_tags=tags(*(literal for literal, _ in MUSE_HEADERS)),
            description="Muse Spark: `<|start|>assistant[ to=self|user|commentary|TOOL]<|message|>` ... `<|eom|>`; "
                        "no recipient and `self` are reasoning; "
                        '`<atem:invoke name="N"><atem:parameter name="k">v</atem:parameter>` to a tool',
        ),
        aliases=("musespark1x", "muse_spark"),
        example=example(
            "<|message|>Weather in Paris.<|eom|><|start|>assistant to=commentary<|message|>Checking.<|eom|>"
            "<|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>" + weather(muse_atem_call)
            + "</atem:function_calls><|eom|>",
            "Weather in Paris.", "Checking.", muse_atem_call, _MUSE_TOOL,
            think=("<|start|>assistant<|message|>", "<|eom|>"), say=("<|start|>assistant to=user<|message|>", "<|eot|>"),
            # stand-in IDs, as in the muse-glimmer row
            special_ids=stand_in("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
        ),
    ),
)
