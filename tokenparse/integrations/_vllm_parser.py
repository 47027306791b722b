"""The ``vllm.parser.Parser`` that serves a tokenparse profile (imported by ``tokenparse.integrations.vllm``).

vLLM builds one parser object per choice and calls, for Chat Completions:

* streaming: ``parse_delta(delta_text, delta_token_ids, request, prompt_token_ids, finished=...)``
  once per engine step. Only ``delta_token_ids`` is read: the text vLLM detokenized is
  never looked at, so held-back text, stop strings and split tags cannot disagree with
  the IDs.
* non-streaming: ``set_prompt_token_ids(ids)`` then ``parse(text, request, ...,
  model_output_token_ids)``; again only the IDs are parsed.

Per request state (all on the instance, none shared): ``_tp`` is the tokenparse parser of
the response (created at the first call, when the request is known), ``_tp_prompt`` the
prompt IDs from ``set_prompt_token_ids``, ``_tp_seen`` how many IDs were fed (for the
``length`` decision at the end).
"""
from __future__ import annotations

from typing import Any, Literal, Sequence

from vllm.entrypoints.generate.base.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall
from vllm.parser.abstract_parser import DelegatingParser
from vllm.parser.harmony import HarmonyParser
from vllm.tool_parsers.abstract_tool_parser import ToolParser
from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

import tokenparse

from ._vllm_models import model_for

__all__ = ["TokenparseToolParser", "TokenparseGptOssToolParser", "TokenparseTagParser", "TokenparseHarmonyParser",
           "is_grammar_constrained", "tokenparse_structured_outputs"]

#: profile -> the structural-tag model vLLM's own parser for that format uses, so requests
#: with ``tool_choice`` required/named are constrained to the model's native call syntax
#: (``None``: no structural tag; such requests decode unconstrained and are parsed natively)
STRUCTURAL_TAG_MODELS: dict[str, str | None] = {
    "qwen3": "hermes",
    "qwen3-coder": "qwen_3_coder",
    "qwen3.5": "qwen_3_5",
    "deepseek-r1": "deepseek_r1",
    "deepseek-v3": "deepseek_r1",
    "deepseek-v3.1": "deepseek_v3_1",
    "deepseek-v3.2": "deepseek_v3_2",
    "deepseek-v4": "deepseek_v4",
    "glm-4.7": "glm_4_7",
    "kimi-k2": "kimi",
    "llama3": "llama",
}


class TokenparseToolParser(ToolParser):
    """What ``--tool-call-parser tokenparse[-<profile>]`` names in vLLM's tool-parser registry.

    A capability declaration: the serving layer surfaces tool calls only when the parser
    class has a tool parser. All parsing is done by the ``Parser`` classes below.
    ``tokenparse_profile`` is ``None`` for the auto-detecting name.
    """

    tokenparse_profile: str | None = None
    # required/named tool_choice: keep the native call syntax, never vLLM's JSON-list form
    supports_required_and_named = False

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        raise NotImplementedError("tokenparse parses token IDs in its vllm.parser.Parser; this class only declares it")

    def extract_tool_calls_streaming(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("tokenparse parses token IDs in its vllm.parser.Parser; this class only declares it")


class TokenparseGptOssToolParser(TokenparseToolParser, GptOssToolParser):
    """gpt-oss: also a ``GptOssToolParser`` so ``HarmonyParser``'s own checks accept it."""

    tokenparse_profile = "gpt-oss"
    structural_tag_model = "harmony"


def is_grammar_constrained(request: Any) -> bool:
    """Is this request decoded under a grammar (so tags may come out as ordinary sub-tokens)?

    ``tool_choice`` required or a named function, or structured outputs of any kind
    (``response_format`` json_object / json_schema / structural_tag, ``structured_outputs``
    regex / grammar / choice / json, including the structural tag vLLM itself set for the
    tool choice).
    """
    choice = getattr(request, "tool_choice", None)
    if choice == "required" or (choice is not None and not isinstance(choice, str)):
        return True
    extract = getattr(request, "extract_structured_outputs", None)
    if callable(extract):
        return extract() is not None
    return getattr(request, "structured_outputs", None) is not None


def user_structured_outputs(request: Any) -> bool:
    extract = getattr(request, "extract_structured_outputs", None)
    return (extract() if callable(extract) else getattr(request, "structured_outputs", None)) is not None


def tokenparse_structured_outputs(model: tokenparse.Model, request: Any, *, user_constrained: bool) -> Any:
    """Constrain a request that forces a call (``tool_choice`` required or named) or offers a
    strict tool with tokenparse's structural tag for the profile (``model.structural_tag``:
    tags as token IDs, arguments per schema), for every profile; it replaces the tag vLLM set
    for the tool choice. A request that brings its own structured outputs
    (``user_constrained``) keeps vLLM's handling. Returns the request (changed in place, as
    vLLM's own ``adjust_request`` does)."""
    tools = getattr(request, "tools", None)
    if not tools or user_constrained:
        return request
    choice = _tool_choice(getattr(request, "tool_choice", None))
    dumped = [tool.model_dump() if hasattr(tool, "model_dump") else tool for tool in tools]
    strict = any((tool.get("function") or {}).get("strict") for tool in dumped if isinstance(tool, dict))
    forced = choice == "required" or isinstance(choice, dict)
    if choice == "none" or not (forced or strict):
        return request
    import json

    from vllm.sampling_params import StructuredOutputsParams

    kwargs = getattr(request, "chat_template_kwargs", None) or {}
    reasoning = kwargs.get("enable_thinking", kwargs.get("thinking", True)) is not False
    tag = model.structural_tag(dumped, choice, reasoning=reasoning,
                               parallel_tool_calls=getattr(request, "parallel_tool_calls", True) is not False)
    request.structured_outputs = StructuredOutputsParams(structural_tag=json.dumps(tag))
    return request


def _tool_choice(choice: Any) -> Any:
    if choice is None or isinstance(choice, str):
        return choice or "auto"
    if hasattr(choice, "model_dump"):
        return choice.model_dump()
    return choice


def _max_tokens(request: Any) -> int | None:
    fields = getattr(request, "__dict__", {})  # read the deprecated max_tokens without a warning
    return fields.get("max_completion_tokens") or fields.get("max_tokens")


class _TokenparseParsing:
    """The Chat Completions half of ``vllm.parser.Parser``, over a tokenparse parser."""

    tokenparse_profile: str = ""

    def __init__(self, tokenizer: Any, tools: Any = None, *args: Any, model_config: Any = None, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools, *args, model_config=model_config, **kwargs)  # type: ignore[call-arg]
        self._tp_tokenizer = tokenizer
        # loading here (cached per tokenizer) makes vLLM's start-up check fail loudly when the
        # tokenizer lacks the profile's tags, instead of the first request
        self._tp_model = model_for(tokenizer, self.tokenparse_profile, subtoken_tags=False)
        self._tp: tokenparse.Parser | None = None
        self._tp_prompt: list[int] | None = None
        self._tp_seen = 0

    # -- vllm.parser.Parser ------------------------------------------------------------------

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._tp_prompt = list(prompt_token_ids)

    def is_reasoning_end(self, input_ids: list[int]) -> bool:
        """Does a response after ``input_ids`` start outside reasoning (the dialect's start
        rule: the prompt's last reasoning tag, else the profile's default)? Harmony: no, a
        response may always open an analysis message."""
        start_mode = getattr(self._tp_model.dialect, "start_mode", None)
        return start_mode is not None and start_mode(list(input_ids)) != "reasoning"

    def parse(
        self,
        model_output: str,
        request: Any,
        enable_auto_tools: bool = False,
        model_output_token_ids: Sequence[int] = (),
    ) -> tuple[str | None, str | None, list[FunctionCall] | None]:
        parser = self._tp_new(request, self._tp_prompt)
        ids = list(model_output_token_ids)
        parser.feed(ids)
        parser.finish(self._tp_finish_kind(request, len(ids)))
        message = parser.result()
        calls = [FunctionCall(id=c.id, name=c.function.name, arguments=c.function.arguments) for c in message.tool_calls]
        reasoning = message.reasoning if getattr(request, "include_reasoning", True) else None
        return reasoning, message.content, calls or None

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: list[int],
        request: Any,
        prompt_token_ids: list[int] | None = None,
        *,
        finished: bool,
    ) -> DeltaMessage | None:
        parser = self._tp
        if parser is None:
            parser = self._tp = self._tp_new(request, prompt_token_ids)
            self._tp_seen = 0
        ids = list(delta_token_ids)
        self._tp_seen += len(ids)
        deltas = parser.feed(ids) if ids else []
        if finished:
            deltas.extend(parser.finish(self._tp_finish_kind(request, self._tp_seen)))
        return _merge(deltas, include_reasoning=getattr(request, "include_reasoning", True))

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        parser = self._tp
        if parser is not None:
            message = parser.result()
            if message.completion_tokens == len(token_ids):
                return message.reasoning_tokens
        return self._tp_model.parse(list(token_ids), prompt_token_ids=self._tp_prompt).reasoning_tokens

    # -- helpers -----------------------------------------------------------------------------

    def _tp_new(self, request: Any, prompt_token_ids: Sequence[int] | None) -> tokenparse.Parser:
        model = self._tp_model
        if is_grammar_constrained(request) and self.tokenparse_profile != "gpt-oss":
            model = model_for(self._tp_tokenizer, self.tokenparse_profile, subtoken_tags=True)
        tools = getattr(request, "tools", None) or []  # a request without tools accepts no call
        prompt = list(prompt_token_ids) if prompt_token_ids is not None else None
        return model.parser(tools=tools, tool_choice=_tool_choice(getattr(request, "tool_choice", None)),
                            prompt_token_ids=prompt)

    @staticmethod
    def _tp_finish_kind(request: Any, produced: int) -> Literal["stop", "length"]:
        limit = _max_tokens(request)
        return "length" if limit is not None and produced >= limit else "stop"


def _merge(deltas: list[tokenparse.DeltaMessage], *, include_reasoning: bool) -> DeltaMessage | None:
    """One vLLM ``DeltaMessage`` for the step: texts joined per field, tool-call parts in order
    (consecutive argument fragments of one call joined)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[DeltaToolCall] = []
    for delta in deltas:
        if delta.content:
            content.append(delta.content)
        if delta.reasoning and include_reasoning:
            reasoning.append(delta.reasoning)
        for part in delta.tool_calls:
            fn = part.function
            last = calls[-1] if calls else None
            if last is not None and last.index == part.index and part.id is None and fn.name is None:
                assert last.function is not None
                last.function.arguments = (last.function.arguments or "") + (fn.arguments or "")
                continue
            calls.append(DeltaToolCall(index=part.index, id=part.id, type=part.type,
                                       function=DeltaFunctionCall(name=fn.name, arguments=fn.arguments)))
    if not (content or reasoning or calls):
        return None
    out = DeltaMessage()
    if content:
        out.content = "".join(content)
    if reasoning:
        out.reasoning = "".join(reasoning)
    if calls:
        out.tool_calls = calls
    return out


class TokenparseTagParser(_TokenparseParsing, DelegatingParser):
    """Text-tag profiles. ``DelegatingParser`` contributes only ``adjust_request`` (vLLM's
    structural tags for required/named ``tool_choice``); every parsing method is ours."""

    def adjust_request(self, request: Any) -> Any:
        # vLLM's own, then tokenparse's structural tag where it applies (every profile, tags by ID)
        user = user_structured_outputs(request)
        request = super().adjust_request(request)
        return tokenparse_structured_outputs(self._tp_model, request, user_constrained=user)


class TokenparseHarmonyParser(_TokenparseParsing, HarmonyParser):
    """gpt-oss in Chat Completions: tokenparse's Harmony decoder instead of openai-harmony's.

    Still a ``HarmonyParser``: ``adjust_request`` (Harmony's output-format and structural
    tags) is vLLM's, then tokenparse's tag for forced or strict tool calls
    (:func:`tokenparse_structured_outputs`); the Responses API drives the inherited
    ``process_chunk``/``flush`` through its own ``HarmonyContext``, on the ``StreamableParser``
    that ``_vllm_harmony.install_harmony`` puts into vLLM's Harmony utilities.
    """

    tokenparse_profile = "gpt-oss"

    def adjust_request(self, request: Any) -> Any:
        user = user_structured_outputs(request)
        request = super().adjust_request(request)
        return tokenparse_structured_outputs(self._tp_model, request, user_constrained=user)
