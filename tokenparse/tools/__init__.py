"""Payload grammars: the inside of one tool block -> ``tool_begin`` / ``tool_args`` / ``tool_end``.

A grammar class is built per tool block as ``cls(out, log, tools)`` (see
:class:`tokenparse.core.PayloadGrammar`) and may declare ``markers``: the in-block
special tokens (role -> literal) it wants reported as ``marker(role, pos)``.

JSON families (arguments are the model's own JSON text, streamed as scanned):
:class:`JsonEnvelopeGrammar` (Qwen3 / Hermes), :class:`Llama3Grammar`,
:class:`MistralGrammar`, :class:`DeepSeekGrammar` (R1 / V3 / V3.1), :class:`KimiK2Grammar`.
Shared pieces (diagnostic code, ``ArgsError``, :class:`JsonArgsStream`) live in :mod:`.shared`.
XML families live in :mod:`.xml_call` (Qwen3-Coder / Qwen3.5, MiniMax-M2), :mod:`.glm` and
:mod:`.dsml` (DeepSeek V3.2 / V4).
"""
from .deepseek import DeepSeekGrammar, DeepSeekV3Grammar, DeepSeekV31Grammar
from .json_envelope import JsonEnvelopeGrammar, Llama3Grammar
from .kimi import KimiK2Grammar
from .mistral import MistralGrammar
from .shared import JsonArgsStream

__all__ = [
    "JsonArgsStream",
    "JsonEnvelopeGrammar",
    "Llama3Grammar",
    "MistralGrammar",
    "DeepSeekGrammar",
    "DeepSeekV3Grammar",
    "DeepSeekV31Grammar",
    "KimiK2Grammar",
]
