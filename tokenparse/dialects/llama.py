"""Llama 3 and 4: JSON calls (optionally after `<|python_tag|>`) and Llama 4's pythonic calls.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_envelope import Llama3Grammar
from ..tools.pythonic import PythonicGrammar
from .profile import Profile, row, tags
from .spellers import envelope, json_envelope_call, pythonic
from .worked import PARIS, WorkedExample, example, weather

__all__ = ["ROWS"]

_PY = pythonic()


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "llama3", tool_open="<|python_tag|>", grammar=Llama3Grammar, implicit_json_call=True,
            description="Llama 3.1-3.3 JSON tool calling: `{\"name\", \"parameters\"}`, optional `<|python_tag|>`",
        ),
        aliases=("llama-3", "llama3.1", "llama3.2", "llama3.3", "llama3_json"),
        example=WorkedExample(
            text='<|python_tag|>{"name": "get_weather", "parameters": {"location": "Paris"}}',
            reasoning=None, content=None, calls=(("get_weather", PARIS),),
            call=json_envelope_call(args_key="parameters"), block=("<|python_tag|>", ""),
            call_args_first=json_envelope_call(args_key="parameters", args_first=True),
            # Llama 3.1's tokenizer_config.json
            special_ids={
                "<|begin_of_text|>": 128000, "<|end_of_text|>": 128001, "<|start_header_id|>": 128006,
                "<|end_header_id|>": 128007, "<|eom_id|>": 128008, "<|eot_id|>": 128009, "<|python_tag|>": 128010,
            },
            control=frozenset({"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                               "<|eom_id|>", "<|eot_id|>"}),
            vocab_size=128256,
        ),
    ),
    row(
        TagDialect(
            "llama4-json", tool_open="<|python_start|>", tool_close="<|python_end|>", grammar=Llama3Grammar,
            implicit_json_call=True, optional=tags("<|python_start|>", "<|python_end|>"),
            description='Llama 4 JSON tool calling: a bare `{"name", "parameters"}` response',
        ),
        aliases=("llama4_json",),
        example=example(
            '{"name": "get_weather", "parameters": {"location": "Paris"}}', None, None,
            envelope(args_key="parameters"), ("<|python_start|>", "<|python_end|>"),
            special_ids={"<|begin_of_text|>": 200000, "<|eot|>": 200008, "<|python_start|>": 200016,
                         "<|python_end|>": 200017},
            control=frozenset({"<|begin_of_text|>", "<|eot|>"}), vocab_size=202048,
        ),
    ),
    row(
        TagDialect(
            "llama4-pythonic", tool_open="<|python_start|>", tool_close="<|python_end|>", grammar=PythonicGrammar,
            implicit_json_call=True,
            description="Llama 4 pythonic: `[f(a=1), g(b=\"x\")]`, bare or in `<|python_start|>` ... `<|python_end|>`",
        ),
        aliases=("llama4_pythonic",),
        example=example(
            "Checking.<|python_start|>[" + weather(_PY) + "]<|python_end|>", None, "Checking.", _PY,
            ("<|python_start|>[", "]<|python_end|>"), block_per_call=False,
            # Llama 4's tokenizer_config.json
            special_ids={"<|begin_of_text|>": 200000, "<|eot|>": 200008, "<|python_start|>": 200016,
                         "<|python_end|>": 200017},
            control=frozenset({"<|begin_of_text|>", "<|eot|>"}), vocab_size=202048,
        ),
    ),
)
