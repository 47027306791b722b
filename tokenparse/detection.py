"""Which built-in profile fits a tokenizer: ``tokenparse.detect`` and ``load("auto", ...)``.

Detection is data. Each :class:`Rule` names one profile and the evidence that selects it:

* ``tokens``: added-token literals the tokenizer must have, each as one token (matched
  by literal in the tokenizer's added tokens, exactly as a dialect resolves its tags);
* ``without_tokens``: literals whose presence rules the profile out (a look-alike's tags);
* ``template`` / ``without_template``: substrings the chat template must / must not
  contain. Families that share a vocabulary (Qwen3, Qwen3-Coder and Qwen3.5 all have
  ``<tool_call>``) differ only in how their template writes a call;
* ``model_types``: a ``config.json`` ``model_type`` that decides on its own
  (``gpt_oss`` -> gpt-oss).

A rule matches when every condition that can be checked holds. Template conditions are
checked only when a chat template is known; without one, rules that differ only by
template all match and the caller gets an ambiguity error naming them (pass the template,
or name the profile). Adding a format is adding a row to :data:`RULES` (or calling
:func:`register_rule`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import TokenizerError
from .tokenizers.table import TokenTable

__all__ = ["Rule", "Candidate", "DetectionError", "RULES", "register_rule", "detect", "detect_profile", "resolve"]


@dataclass(frozen=True)
class Rule:
    """The evidence that selects one profile (see the module docstring)."""

    profile: str
    tokens: tuple[str, ...] = ()
    without_tokens: tuple[str, ...] = ()
    template: tuple[str, ...] = ()
    without_template: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """A profile whose rule matched, with the evidence that made it match."""

    profile: str
    evidence: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.profile} ({'; '.join(self.evidence)})"


class DetectionError(TokenizerError):
    """No profile, or more than one, fits the tokenizer. ``candidates`` lists the matches."""

    def __init__(self, message: str, candidates: Iterable[Candidate] = ()) -> None:
        super().__init__(message, code="detection")
        self.candidates = list(candidates)


_QWEN_BLOCK = ("<tool_call>", "</tool_call>")
_THINK = ("<think>", "</think>")
_GLM_ARGS = ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
_DEEPSEEK = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>")
#: V3.2 / V4 templates write DSML; a template that does is not an older DeepSeek's
_DSML = "｜DSML｜"
#: V4.1 writes a space after the DSML token in every tag (``<｜DSML｜ calls>``)
_DSML_V41 = "｜DSML｜ "
#: Qwen3-Coder / Qwen3.5 templates show the XML call form; Qwen3's shows the JSON envelope
_XML_CALL = ("<function=", "<parameter=")
_GLM_47_PROMPT = "<|assistant|><think>"
#: tokenizers with Qwen's block tokens that are not Qwen's: GLM (argument tags), ERNIE 4.5
#: (its answer wrapper)
_NOT_QWEN = _GLM_ARGS + ("<response>",)

#: how pythonic templates (Llama 3.2, Llama 4) describe a call
_PYTHONIC = "[func_name1("
_INTERN = ("<|action_start|>", "<|action_end|>", "<|plugin|>")
_LLAMA4 = ("<|header_start|>", "<|python_start|>", "<|python_end|>")

#: Beam's argument element, in its chat template
_RFL = "<rfl:parameter"

#: one row per built-in profile; every row is tried, and more than one match is an ambiguity
RULES: list[Rule] = [
    Rule("gpt-oss", tokens=("<|start|>", "<|channel|>", "<|message|>", "<|call|>"), without_template=(_RFL,),
         model_types=("gpt_oss",)),
    # Beam: Harmony's tokens too; its template writes each argument as an <rfl:parameter>
    Rule("beam", template=(_RFL, "<|constrain|>"), model_types=("beam",)),
    Rule("qwen3", tokens=_QWEN_BLOCK, without_tokens=_NOT_QWEN, template=("<args-json-object>",)),
    Rule("qwen3-coder", tokens=_QWEN_BLOCK, without_tokens=_NOT_QWEN, template=_XML_CALL, without_template=("<think>",)),
    Rule("qwen3.5", tokens=_QWEN_BLOCK + _THINK, without_tokens=_NOT_QWEN, template=_XML_CALL + ("<think>",)),
    Rule("deepseek-r1", tokens=_DEEPSEEK, template=("```json", "<think>"), without_template=(_DSML,)),
    Rule("deepseek-v3", tokens=_DEEPSEEK, template=("```json",), without_template=("<think>", _DSML)),
    Rule("deepseek-v3.1", tokens=_DEEPSEEK, template=("<think>",), without_template=("```json", _DSML)),
    Rule("deepseek-v3.2", tokens=(_DSML,), template=("function_calls",)),
    Rule("deepseek-v4", tokens=(_DSML,) + _THINK, template=("tool_calls",), without_template=("function_calls", _DSML_V41)),
    # HY v3 has GLM's argument tags too, and <tool_sep> between a call's name and them
    # (HY v4 has GLM's argument tags inside a <tool_calls> section)
    Rule("glm-4.5", tokens=_QWEN_BLOCK + _GLM_ARGS, without_tokens=("<tool_sep>", "<tool_calls>"),
         without_template=(_GLM_47_PROMPT,)),
    Rule("glm-4.7", tokens=_QWEN_BLOCK + _GLM_ARGS, without_tokens=("<tool_sep>", "<tool_calls>"),
         template=(_GLM_47_PROMPT,)),
    Rule("kimi-k2", tokens=("<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>")),
    Rule("mistral", tokens=("[TOOL_CALLS]",)),
    # Llama 3.2's pythonic template asks for "[func_name1(params_name1=params_value1, ...)]"
    Rule("llama3", tokens=("<|python_tag|>", "<|eot_id|>"), without_template=(_PYTHONIC,)),
    # MiniMax-M2's tags are text in some tokenizers: its only token evidence is <think>,
    # so other families' tool tokens rule it out
    Rule("minimax-m2", tokens=_THINK, without_tokens=(_QWEN_BLOCK[0], _DEEPSEEK[0], _DSML, "<|tool_calls_section_begin|>"),
         template=("<minimax:tool_call>",)),
    # the further families (tokenparse/dialects/: one module per family)
    Rule("seed-oss", tokens=("<seed:tool_call>", "</seed:tool_call>")),
    Rule("longcat", tokens=("<longcat_tool_call>", "</longcat_tool_call>")),
    Rule("jamba", tokens=("<tool_calls>", "</tool_calls>"), without_tokens=("<think>", "<tool_sep>")),
    Rule("minimax-m1", tokens=("<tool_calls>", "</tool_calls>") + _THINK, without_tokens=("<tool_sep>", "<arg_key>"),
         without_template=("<minimax:tool_call>",)),
    Rule("internlm2", tokens=_INTERN, without_template=("<think>",)),
    Rule("intern-s1", tokens=_INTERN, template=("<think>",)),
    Rule("granite4", tokens=("<|start_of_role|>",), without_tokens=("<|tool_call|>",), template=("<tool_call>",)),
    Rule("granite-3", tokens=("<|start_of_role|>", "<|tool_call|>")),
    Rule("granite-20b-fc", template=("<function_call>",)),
    Rule("phi-4-mini", template=("functools[",)),
    Rule("cohere-command", tokens=("<|START_ACTION|>", "<|END_ACTION|>")),
    Rule("llama4-json", tokens=_LLAMA4, without_template=(_PYTHONIC,)),
    Rule("llama4-pythonic", tokens=_LLAMA4, template=(_PYTHONIC,)),
    Rule("pythonic", template=(_PYTHONIC,), without_tokens=("<|python_start|>",)),
    # xLAM writes no tag and its templates vary: name the profile
    Rule("xlam"),
    Rule("lfm2", tokens=("<|tool_call_start|>", "<|tool_call_end|>")),
    Rule("olmo3", template=("<function_calls>",)),
    Rule("gemma4", tokens=("<|tool_call>", "<tool_call|>")),
    Rule("functiongemma", tokens=("<start_function_call>", "<end_function_call>")),
    Rule("step3", tokens=("<｜tool_calls_begin｜>", "<｜tool_call_begin｜>", "<｜tool_sep｜>")),
    Rule("gigachat3", tokens=("<|role_sep|>",), without_template=("｜GCML｜",)),
    Rule("gigachat3.5", tokens=("<|role_sep|>",), template=("｜GCML｜",)),
    Rule("hy-v3", tokens=("<tool_calls>", "<tool_call>", "<tool_sep>", "<arg_key>")),
    Rule("apertus", tokens=("<|tools_prefix|>", "<|tools_suffix|>")),
    # Hunyuan-A13B's tags are all text: its template asks for "<tool_calls>[{..." and for
    # plain answers that begin "助手：" (Hunyuan-A13B-Instruct tokenizer_config.json)
    Rule("hunyuan-a13b", tokens=("<|extra_0|>", "<|extra_4|>"), template=("<tool_calls>[{", "助手：")),
    Rule("ernie-4.5", tokens=("<response>", "</response>", "<tool_call>", "</tool_call>")),
    # Spark 2.5 and TeleChat4 tokenizers are not published in a form that could be checked:
    # name the profile (a GLM-like tokenizer is read as glm-4.5, the same call layout)
    Rule("spark2.5"),
    Rule("telechat4"),
    # more families (tokenparse/dialects/)
    # Holo2's tokenizer and template are Qwen3-VL's: detection finds qwen3, which reads the
    # same format (a prompt ending in <think> starts it in reasoning); name holo2 for its default
    Rule("holo2"),
    Rule("deepseek-v4.1", tokens=(_DSML,) + _THINK, template=(_DSML_V41,)),
    Rule("dots", template=("<dots_function_call>",)),
    Rule("minicpm5", template=('<function name="', '<param name="')),
    Rule("hy-v4", tokens=("<tool_calls>", "<tool_call>", "<arg_key>") + _THINK, without_tokens=("<tool_sep>",)),
    Rule("k2-horizon", tokens=("<ifm|tool_calls>", "<ifm|tool_call>", "<ifm|arg_key>")),
    Rule("minimax-m3", tokens=("]<]minimax[>[",)),
    Rule("plamo3", tokens=("<|plamo:begin_", "<|plamo:end_", ":plamo|>")),
    Rule("kimi-k3", tokens=("<|open|>", "<|close|>", "<|sep|>")),
    Rule("inkling", tokens=("<|message_model|>", "<|content_invoke_tool_json|>", "<|end_message|>")),
    # Muse Spark: Glimmer's tokens; its template addresses messages to=commentary (vLLM 0.33's
    # muse parser routes them to the answer; Glimmer's parser knows no such recipient)
    Rule("muse-glimmer", tokens=("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"), without_template=("to=commentary",)),
    Rule("muse-spark", tokens=("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"), template=("to=commentary",)),
    Rule("solar-open2", tokens=("<|tool_call:start|>", "<|tool_arg:start|>", "<|tool_arg:value|>")),
]


def register_rule(rule: Rule) -> Rule:
    """Add (or replace, by profile name) the detection row of a profile."""
    RULES[:] = [r for r in RULES if r.profile != rule.profile]
    RULES.append(rule)
    return rule


def detect(tokenizer: Any, *, chat_template: str | None = None, model_type: str | None = None) -> list[Candidate]:
    """Every profile whose detection rule fits ``tokenizer``, with the evidence.

    ``tokenizer`` is anything :func:`tokenparse.load` accepts (a model folder also gives
    its chat template and ``config.json`` model type). ``chat_template`` and ``model_type``
    override what the tokenizer object or folder says.
    """
    return _detect(*_inputs(tokenizer, chat_template, model_type))


def detect_profile(tokenizer: Any, *, chat_template: str | None = None, model_type: str | None = None) -> str:
    """The one profile that fits; :class:`DetectionError` naming the candidates otherwise."""
    return resolve(tokenizer, chat_template=chat_template, model_type=model_type)[0]


def resolve(tokenizer: Any, *, chat_template: str | None = None, model_type: str | None = None) -> tuple[str, TokenTable]:
    """The fitting profile and the token table built on the way (so ``load`` builds it once)."""
    table, template, kind = _inputs(tokenizer, chat_template, model_type)
    candidates = _detect(table, template, kind)
    if len(candidates) == 1:
        return candidates[0].profile, table
    what = table.name or type(tokenizer).__name__
    if not candidates:
        raise DetectionError(
            f"no built-in profile fits tokenizer {what!r}: none of {', '.join(r.profile for r in RULES)} "
            "has all its tag tokens there; name the profile: tokenparse.load('<profile>', tokenizer=...)"
        )
    hint = "" if template is not None else " (no chat template was available to tell them apart)"
    listed = "; ".join(str(c) for c in candidates)
    raise DetectionError(
        f"tokenizer {what!r} fits {len(candidates)} profiles{hint}: {listed}. "
        "Name one: tokenparse.load('<profile>', tokenizer=...)",
        candidates,
    )


def _detect(table: TokenTable, template: str | None, model_type: str | None) -> list[Candidate]:
    if model_type:
        by_type = [Candidate(r.profile, (f"model_type {model_type!r}",)) for r in RULES if model_type in r.model_types]
        if by_type:
            return by_type
    found = []
    for rule in RULES:
        evidence = _match(rule, table, template)
        if evidence is not None:
            found.append(Candidate(rule.profile, evidence))
    return found


def _match(rule: Rule, table: TokenTable, template: str | None) -> tuple[str, ...] | None:
    if not rule.tokens and not rule.template:
        return None  # a row with nothing positive to see would match every tokenizer
    if not rule.tokens and template is None:
        return None  # a template-only row needs the template it looks for
    added = table.added
    evidence: list[str] = []
    for literal in rule.tokens:
        token_id = added.get(literal)
        if token_id is None:
            return None
        evidence.append(f"token {literal} = {token_id}")
    for literal in rule.without_tokens:
        if literal in added:
            return None
    if rule.without_tokens:
        evidence.append("no " + ", ".join(rule.without_tokens))
    if rule.template or rule.without_template:
        if template is None:
            evidence.append("chat template not checked (none available)")
        else:
            if not all(marker in template for marker in rule.template):
                return None
            if any(marker in template for marker in rule.without_template):
                return None
            evidence.extend(f"template has {m!r}" for m in rule.template)
            evidence.extend(f"template lacks {m!r}" for m in rule.without_template)
    return tuple(evidence)


def _inputs(tokenizer: Any, chat_template: str | None, model_type: str | None) -> tuple[TokenTable, str | None, str | None]:
    from .tokenizers import load_table

    if tokenizer is None:
        raise TypeError("detection needs the tokenizer: tokenparse.load('auto', tokenizer=<your engine's tokenizer>)")
    folder = _folder(tokenizer)
    if chat_template is None:
        chat_template = _template_of(tokenizer, folder)
    if model_type is None and folder is not None:
        model_type = _read_json(folder / "config.json").get("model_type")
    return load_table(tokenizer), chat_template, model_type


def _folder(tokenizer: Any) -> Path | None:
    if isinstance(tokenizer, (str, Path)):
        p = Path(tokenizer)
        return p if p.is_dir() else p.parent
    return None


def _template_of(tokenizer: Any, folder: Path | None) -> str | None:
    if folder is not None:
        jinja = folder / "chat_template.jinja"
        if jinja.is_file():
            return jinja.read_text(encoding="utf-8")
        return _template_text(_read_json(folder / "tokenizer_config.json").get("chat_template"))
    return _template_text(getattr(tokenizer, "chat_template", None))


def _template_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):  # named templates ({"default": ..., "tool_use": ...})
        return "\n".join(v for v in value.values() if isinstance(v, str)) or None
    if isinstance(value, list):  # tokenizer_config.json form: [{"name": ..., "template": ...}]
        parts = [v.get("template") for v in value if isinstance(v, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
