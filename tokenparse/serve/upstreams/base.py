"""What every upstream engine class implements (one small class per engine's token-ID endpoint).

An upstream turns a :class:`GenerateRequest` (prompt token IDs and sampling options) into
one HTTP request to its engine and the engine's streaming answer into :class:`Step`\\ s:
the *new* token IDs of each engine step, their logprobs when asked for, and the finish
reason on the last step. It parses no model output and matches no text: the gateway owns
all of that. Cancelling the iterator (the client went away) leaves the ``async with`` of
the HTTP response, which closes the connection; the engine then aborts the request.

Errors: :class:`UpstreamError` for a refused connection, an HTTP error status, a payload
that is not the engine's format, or a timeout (``status`` is the engine's HTTP status
when there was one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar

from ._error import UpstreamError
from ._stream import EventStreamClient

if TYPE_CHECKING:
    import aiohttp

__all__ = ["Grammar", "GenerateRequest", "TokenLogprob", "Step", "UpstreamError", "Upstream"]


@dataclass(frozen=True, slots=True)
class Grammar:
    """A decoding constraint the engine applies: ``kind`` is ``"structural_tag"``,
    ``"gbnf"`` or ``"lark"``; ``value`` is its text (or object, for a structural tag).
    ``banned_ids``: end-of-turn IDs the grammar's end does not allow (the grammar stops before
    the engine's end tokens, which the engine then lets through): the upstream bans them with
    its engine's ``logit_bias`` unless the client sent its own."""

    kind: str
    value: Any
    banned_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    prompt_ids: list[int]
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)  # stop strings from the client
    stop_token_ids: list[int] = field(default_factory=list)  # the profile's end-of-turn IDs (+ client's)
    logprobs: int | None = None  # None: off; n >= 0: the sampled token's logprob + n top
    grammar: Grammar | None = None  # constrained decoding, optional
    extra: dict[str, Any] = field(default_factory=dict)  # engine-specific pass-through (vllm_xargs...)


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    token_id: int
    logprob: float
    top: list[tuple[int, float]]  # (token_id, logprob), best first


@dataclass(frozen=True, slots=True)
class Step:
    token_ids: list[int]  # NEW ids since the previous step (one or more engine steps; never cumulative)
    logprobs: list[TokenLogprob] | None = None  # one per token id when requested
    finish_reason: str | None = None  # "stop" | "length" | None (set on the last step only)
    prompt_tokens: int | None = None  # usage, when the engine reports it
    completion_tokens: int | None = None


class Upstream:
    """Base class: one engine endpoint at ``base_url`` (no trailing ``/v1``), over ``session``."""

    name: ClassVar[str] = ""
    #: request body keys passed to this engine unchanged (e.g. vLLM's ``vllm_xargs``)
    extra_fields: ClassVar[frozenset[str]] = frozenset()
    #: the :class:`Grammar` kind this engine constrains decoding with (``None``: the gateway sends none)
    grammar_kind: ClassVar[str | None] = None

    def __init__(self, base_url: str, session: aiohttp.ClientSession, *, model: str | None,
                 timeout: float, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session
        self.model = model
        self.timeout = timeout
        self.api_key = api_key
        #: the streamed POSTs to this engine (own connections, see ._stream)
        self.streams = EventStreamClient(self.base_url)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        """Stream the completion of ``request.prompt_ids``. Cancelling the iterator (client
        gone) closes the HTTP response so the engine aborts the request."""
        raise NotImplementedError

    async def health(self) -> bool:
        raise NotImplementedError
