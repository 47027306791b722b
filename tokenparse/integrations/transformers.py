"""tokenparse inside Hugging Face ``model.generate()``: a streamer of message deltas.

``DeltaStreamer`` is a transformers ``BaseStreamer``: ``generate()`` hands it the prompt,
then the IDs of every decoding step, and it runs one tokenparse parser per batch row. It
works with any batch size (transformers' own text streamers refuse batch > 1) and with
assisted decoding (several IDs per step). Consume it either way:

* iterate it from another thread while ``generate()`` runs: it yields ``DeltaMessage``s
  for a batch of one, ``(row, DeltaMessage)`` pairs for a larger batch, and honours
  ``timeout`` like ``TextIteratorStreamer`` (``queue.Empty`` when nothing arrives in time);
* or call ``results()`` after ``generate()`` returns: one ``ChatMessage`` per row.

Example (any causal LM; Qwen3 shown)::

    import threading
    import tokenparse
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from tokenparse.integrations.transformers import DeltaStreamer

    tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen3-0.6B")
    lm = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B")
    model = tokenparse.load("qwen3", tokenizer=tokenizer)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    inputs = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Weather in Paris?"}], tools=tools,
        add_generation_prompt=True, return_tensors="pt", return_dict=True)

    streamer = DeltaStreamer(model, tools=tools, timeout=60,
                             eos_token_id=lm.generation_config.eos_token_id,
                             pad_token_id=lm.generation_config.pad_token_id)
    thread = threading.Thread(target=lm.generate, kwargs=dict(
        **inputs, streamer=streamer, max_new_tokens=512))
    thread.start()
    for delta in streamer:                 # DeltaMessage: content / reasoning / tool_calls
        print(delta.reasoning or "", delta.content or "", delta.tool_calls)
    thread.join()
    message = streamer.results()[0]        # ChatMessage: the same events, aggregated
    print(message.tool_calls)

Row lifecycle (facts of transformers 5.x ``generate``): the first ``put`` is the prompt,
``[batch, prompt_len]``; then one ``[batch]`` tensor per step (``[batch, n]`` under assisted
decoding); then ``end()``. A finished row keeps receiving the pad ID. A row's parser is fed
up to and including its first EOS ID (Harmony's ``<|call|>``/``<|return|>`` are part of the
message) and finished there with reason ``"stop"``; a pad ID that is not an EOS ID (a row
stopped by a stop string) ends the row without being fed. Rows still open at ``end()``
finish with ``"length"``. After ``end()`` the streamer is ready for another ``generate()``.

``parse_response(tokenizer, ids, tools=...)`` is the non-streaming counterpart shaped like
transformers' ``tokenizer.parse_response`` (see its docstring for the keys that differ).
"""
from __future__ import annotations

import json
import queue
from typing import Any, Iterable, Iterator, Sequence

try:
    from transformers.generation.streamers import BaseStreamer
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tokenparse.integrations.transformers needs transformers and torch (in a tokenparse checkout: pip install -e '.[transformers]')"
    ) from exc

from ..api import Model, Parser
from ..messages import ChatMessage, DeltaMessage
from ._models import model_for

__all__ = ["DeltaStreamer", "parse_response", "DEFAULT_EOS_LITERALS"]

#: end-of-turn tokens looked up in the model's tokenizer when ``eos_token_id`` is not given
#: (the EOS IDs of the families' generation configs); pass ``eos_token_id`` to be exact
DEFAULT_EOS_LITERALS = (
    "<|im_end|>",  # Qwen, Kimi
    "<|endoftext|>",  # Qwen base, GLM, gpt-oss
    "<|return|>",  # gpt-oss
    "<|call|>",  # gpt-oss
    "<|eot_id|>",  # Llama 3
    "<|eom_id|>",  # Llama 3 (tool call)
    "<|end_of_text|>",  # Llama 3
    "<｜end▁of▁sentence｜>",  # DeepSeek
    "</s>",  # Mistral
    "<|user|>",  # GLM
    "<|observation|>",  # GLM
    "[e~[",  # MiniMax-M2
)

_END = object()  # queue sentinel: generate() finished


class _Failed:
    """Queue item carrying an exception raised in ``put``/``end`` to the consuming thread."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Row:
    """One batch row. States: open (``done`` false: fed by ``put``), done (its EOS or pad was
    seen, or ``end()`` came: the parser is finished and later IDs are ignored)."""

    __slots__ = ("parser", "done")

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.done = False


class DeltaStreamer(BaseStreamer):
    """``generate(..., streamer=DeltaStreamer(model))``: tokenparse deltas per batch row.

    ``model`` is a :class:`tokenparse.Model`; ``tools`` the request's Chat Completions tools;
    ``timeout`` (seconds) bounds each wait of the iterator. ``eos_token_id`` (an int or a
    list, as in ``generation_config``) and ``pad_token_id`` tell where a row ends; without
    ``eos_token_id`` the IDs of :data:`DEFAULT_EOS_LITERALS` found in the model's tokenizer
    are used. Other keyword arguments go to ``model.parser`` (``tool_choice``, ``strict``,
    ``id_factory``).

    Buffers: the delta queue holds what the consumer has not taken yet (nothing is queued
    when nobody iterates: pass ``queue_deltas=False`` for ``results()``-only use). Each
    parser owns its own bounded buffers.
    """

    def __init__(
        self,
        model: Model,
        *,
        tools: Iterable[Any] | None = None,
        timeout: float | None = None,
        eos_token_id: int | Sequence[int] | None = None,
        pad_token_id: int | None = None,
        queue_deltas: bool = True,
        **parser_options: Any,
    ) -> None:
        if not isinstance(model, Model):
            raise TypeError(
                f"DeltaStreamer takes a tokenparse.Model (tokenparse.load(...)), got {type(model).__name__}"
            )
        self.model = model
        self.tools = list(tools) if tools is not None else None
        self.timeout = timeout
        self.parser_options = parser_options
        self.eos_token_ids = frozenset(_eos_ids(model, eos_token_id))
        self.pad_token_id = pad_token_id
        self._queue_deltas = queue_deltas
        self._queue: queue.Queue[Any] = queue.Queue()
        self._rows: list[_Row] = []
        self._expect_prompt = True

    # -- BaseStreamer --------------------------------------------------------------------------

    def put(self, value: Any) -> None:
        """Called by ``generate()``: the prompt first, then each step's new IDs."""
        try:
            ids = value.tolist() if hasattr(value, "tolist") else list(value)
            if self._expect_prompt:
                self._start(ids)
            else:
                self._step(ids)
        except BaseException as exc:
            self._queue.put(_Failed(exc))
            raise

    def end(self) -> None:
        """Called by ``generate()`` when it stops: rows still open ran out of length."""
        try:
            for index, row in enumerate(self._rows):
                if not row.done:
                    self._finish(index, row, "length")
            self._expect_prompt = True
        except BaseException as exc:
            self._queue.put(_Failed(exc))
            raise
        if self._queue_deltas:
            self._queue.put(_END)

    # -- consuming -------------------------------------------------------------------------------

    @property
    def batch_size(self) -> int:
        """Rows of the current (or last) generation; 0 before the prompt arrives."""
        return len(self._rows)

    def results(self) -> list[ChatMessage]:
        """One complete message per row (final once ``generate()`` has returned)."""
        return [row.parser.result() for row in self._rows]

    def parsers(self) -> list[Parser]:
        """The rows' parsers (diagnostics, JSON views); one per row."""
        return [row.parser for row in self._rows]

    def __iter__(self) -> Iterator[Any]:
        if not self._queue_deltas:
            raise TypeError("this DeltaStreamer was made with queue_deltas=False: use results()")
        return self

    def __next__(self) -> Any:
        item = self._queue.get(timeout=self.timeout)
        if item is _END:
            raise StopIteration
        if type(item) is _Failed:
            raise item.error
        index, delta = item
        return delta if len(self._rows) == 1 else (index, delta)

    # -- internals -------------------------------------------------------------------------------

    def _start(self, prompt: list[Any]) -> None:
        rows = prompt if prompt and isinstance(prompt[0], list) else [prompt]
        pad = self.pad_token_id
        self._rows = []
        for prompt_ids in rows:
            start = 0
            if pad is not None:  # left padding of a batch: not part of this row's prompt
                while start < len(prompt_ids) and prompt_ids[start] == pad:
                    start += 1
            parser = self.model.parser(self.tools, prompt_token_ids=prompt_ids[start:], **self.parser_options)
            self._rows.append(_Row(parser))
        self._expect_prompt = False

    def _step(self, ids: list[Any]) -> None:
        rows = self._rows
        if len(ids) != len(rows):
            raise ValueError(f"DeltaStreamer: a step has {len(ids)} rows, the prompt had {len(rows)}")
        if ids and not isinstance(ids[0], list):
            ids = [[token] for token in ids]  # one ID per row: the usual step
        eos, pad = self.eos_token_ids, self.pad_token_id
        for index, (row, step) in enumerate(zip(rows, ids)):
            if row.done:
                continue
            stop = None
            for pos, token in enumerate(step):
                if token in eos:
                    stop, step = "eos", step[: pos + 1]
                    break
                if token == pad:
                    stop, step = "pad", step[:pos]
                    break
            if step:
                self._emit(index, row.parser.feed(step))
            if stop is not None:
                self._finish(index, row, "stop")

    def _finish(self, index: int, row: _Row, reason: str) -> None:
        row.done = True
        self._emit(index, row.parser.finish(reason))  # type: ignore[arg-type]

    def _emit(self, index: int, deltas: list[DeltaMessage]) -> None:
        if self._queue_deltas:
            put = self._queue.put
            for delta in deltas:
                put((index, delta))


def _eos_ids(model: Model, eos_token_id: int | Sequence[int] | None) -> list[int]:
    if eos_token_id is None:
        found = (model.table.id_of(literal) for literal in DEFAULT_EOS_LITERALS)
        return [token_id for token_id in found if token_id is not None]
    if isinstance(eos_token_id, int):
        return [eos_token_id]
    return [int(token_id) for token_id in eos_token_id]


# ---------------------------------------------------------------------------------------------
# parse_response: the shape of transformers' tokenizer.parse_response
# ---------------------------------------------------------------------------------------------


def parse_response(
    tokenizer: Any,
    ids: Any,
    tools: Iterable[Any] | None = None,
    *,
    profile: str | None = None,
    prefix: Any = None,
    reasoning_key: str = "reasoning_content",
) -> dict[str, Any] | list[dict[str, Any]]:
    """Parse generated IDs into the message dict transformers' ``tokenizer.parse_response`` returns.

    ``tokenizer`` is the transformers tokenizer (or a :class:`tokenparse.Model`);
    ``profile`` names the model format (default: detected from the tokenizer); ``ids`` is
    one completion (``list[int]``, 1-D tensor) or a batch (``list[list[int]]``, 2-D tensor),
    which returns a list of dicts; ``prefix`` is the prompt's IDs (one list for all rows or
    one per row): it decides the start state where the chat template opens ``<think>``.
    Returns ``{"role": "assistant", "reasoning_content": ..., "content": ..., "tool_calls":
    [{"type": "function", "function": {"name": ..., "arguments": {...}}}]}``; keys whose
    value would be empty are left out, as transformers does.

    Differences from transformers' (template- and text-based) parser:

    * IDs only: text (``str``) input is refused, and ``prefix`` is IDs, not text.
      ``prefix`` is optional (transformers requires it).
    * ``reasoning_content`` is the key transformers' built-in templates use; some Hub
      templates say ``thinking``: pass ``reasoning_key="thinking"``.
    * ``arguments`` is the parsed JSON object, as transformers gives it; arguments that are
      not complete JSON (a call cut off by the length limit) stay the raw string the model
      wrote, where transformers would fail.
    * With ``tools``, calls to names not in it are left out (tokenparse's rule; transformers
      uses ``tools`` only to type XML parameters). XML-style parameters are typed from the
      schema in both.
    * No template is needed: the profile comes from tokenparse (no ``response_template``).
    * A tag the model spelled with ordinary tokens is text. transformers agrees from 5.25,
      which parses a fast tokenizer's IDs; before 5.25 it parsed the decoded text, so such a
      tag became a call.
    """
    model = model_for(tokenizer, profile)
    rows, batched = _rows_of(ids)
    if prefix is None:
        prefixes: list[Any] = [None] * len(rows)
    else:
        plist = _as_list(prefix)
        per_row = bool(plist) and isinstance(plist[0], list)
        prefixes = plist if per_row else [plist] * len(rows)
        if len(prefixes) != len(rows):
            raise ValueError(f"parse_response: {len(prefixes)} prefixes for {len(rows)} responses")
    tool_list = list(tools) if tools is not None else None
    out = [_message_dict(model.parse(row, tool_list, prompt_token_ids=p), reasoning_key) for row, p in zip(rows, prefixes)]
    return out if batched else out[0]


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        raise TypeError("tokenparse parses token IDs: pass the generated IDs, not decoded text")
    return value.tolist() if hasattr(value, "tolist") else list(value)


def _rows_of(ids: Any) -> tuple[list[list[int]], bool]:
    values = _as_list(ids)
    if values and hasattr(values[0], "__len__"):  # rows: lists, tuples, 1-D arrays
        return [_as_list(row) for row in values], True
    return [values], False


def _message_dict(message: ChatMessage, reasoning_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    if message.reasoning:
        out[reasoning_key] = message.reasoning
    if message.content:
        out["content"] = message.content
    if message.tool_calls:
        out["tool_calls"] = [
            {"type": "function", "function": {"name": call.function.name, "arguments": _arguments(call.function.arguments)}}
            for call in message.tool_calls
        ]
    return out


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
