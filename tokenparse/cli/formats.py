"""Output formats for ``tokenparse decode``: the CLI's bridge to the adapters.

The CLI calls one function::

    write_stream(
        fmt,                      # "chat" | "responses" | "anthropic" | "deltas" | "message"
        steps,                    # Iterable[Sequence[DeltaMessage]]: what each parser.feed()
                                  #   returned, then what parser.finish() returned
        result,                   # Callable[[], ChatMessage]: parser.result, called once after
                                  #   ``steps`` is exhausted
        *,
        sse=False,                # True: Server-Sent Events framing; False: one JSON per line
        out=sys.stdout,           # any text stream; flushed after every step
        model_name="tokenparse",  # "model" field of chat/responses/anthropic objects
        reasoning_field="reasoning",   # chat only: or "reasoning_content"
        include_usage=True,       # chat only: the trailing usage chunk
        prompt_tokens=0,          # usage: input/prompt token count
    ) -> None

``render`` takes the same arguments (minus ``out``) and yields the text pieces instead.

What each format writes:

* ``chat``: ``chat.completion.chunk`` objects; with ``sse`` as ``data:`` lines ending with
  ``data: [DONE]``.
* ``responses`` / ``anthropic``: the stream events; with ``sse`` as ``event:`` + ``data:``.
* ``deltas``: tokenparse's own ``DeltaMessage`` objects (unset fields left out); with
  ``sse`` as ``data:`` lines.
* ``message``: only the complete ``ChatMessage``, one JSON object (``sse`` adds ``data:``).
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from ..adapters import SSE_DONE, AnthropicMessageStream, ChatCompletionStream, ResponsesStream
from ..adapters._common import to_json
from ..messages import ChatMessage, DeltaMessage

__all__ = ["FORMATS", "render", "write_stream"]

FORMATS = ("chat", "responses", "anthropic", "deltas", "message")


def _frame(obj: Any, sse: bool) -> str:
    """A JSON object as one JSONL line or one SSE ``data:`` frame."""
    text = to_json(obj)
    return f"data: {text}\n\n" if sse else text + "\n"


def _frame_event(event: Any, sse: bool) -> str:
    return event.to_sse() if sse else event.to_json() + "\n"


def render(
    fmt: str,
    steps: Iterable[Sequence[DeltaMessage]],
    result: Callable[[], ChatMessage],
    *,
    sse: bool = False,
    model_name: str = "tokenparse",
    reasoning_field: str = "reasoning",
    include_usage: bool = True,
    prompt_tokens: int = 0,
) -> Iterator[str]:
    """Yield the output text for ``fmt``, one piece per step (see the module docstring)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")

    if fmt == "message":
        for _ in steps:
            pass
        yield _frame(result().model_dump(mode="json"), sse)
        return

    if fmt == "deltas":
        for deltas in steps:
            piece = "".join(_frame(d.model_dump(mode="json", exclude_defaults=True), sse) for d in deltas)
            if piece:
                yield piece
        return

    adapter: ChatCompletionStream | ResponsesStream | AnthropicMessageStream
    if fmt == "chat":
        adapter = ChatCompletionStream(
            model=model_name,
            reasoning_field=reasoning_field,  # type: ignore[arg-type]
            include_usage=include_usage,
            prompt_tokens=prompt_tokens,
        )
    elif fmt == "responses":
        adapter = ResponsesStream(model=model_name, prompt_tokens=prompt_tokens)
    else:
        adapter = AnthropicMessageStream(model=model_name, prompt_tokens=prompt_tokens)

    def frames(events: list) -> str:
        return "".join(_frame_event(e, sse) for e in events)

    yield frames(adapter.start())
    for deltas in steps:
        piece = frames(adapter.step(deltas))
        if piece:
            yield piece
    tail = frames(adapter.finish(result()))
    if fmt == "chat" and sse:
        tail += SSE_DONE
    yield tail


def write_stream(
    fmt: str,
    steps: Iterable[Sequence[DeltaMessage]],
    result: Callable[[], ChatMessage],
    *,
    sse: bool = False,
    out: TextIO | None = None,
    model_name: str = "tokenparse",
    reasoning_field: str = "reasoning",
    include_usage: bool = True,
    prompt_tokens: int = 0,
) -> None:
    """Write ``render(...)`` to ``out`` (default ``sys.stdout``), flushing after each step."""
    out = sys.stdout if out is None else out
    for piece in render(
        fmt,
        steps,
        result,
        sse=sse,
        model_name=model_name,
        reasoning_field=reasoning_field,
        include_usage=include_usage,
        prompt_tokens=prompt_tokens,
    ):
        out.write(piece)
        out.flush()
