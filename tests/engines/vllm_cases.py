"""What the end-to-end tests check, shared by the Qwen3 and gpt-oss modules.

* tokenparse server: the server emitted exactly the script; the client's message equals
  ``tokenparse.load(...).parse(ids)`` on the same IDs and prompt, streaming and not; a
  streamed call's first delta carries index, id, type and name, and no later one repeats
  them; the script's own facts hold (so a broken parse cannot pass by agreeing with itself).
* vLLM's built-in parsers on the same scripts: which message fields differ from tokenparse
  is :data:`DIFFERENCES`, each with the reason (read from vLLM's source, not from output).
  Text fields are compared without their leading/trailing whitespace: vLLM keeps the
  newlines a template writes around tags, tokenparse trims them (``trim_newlines``); that
  difference is in every Qwen3 row and is not repeated.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

import vllm_e2e as e2e
from vllm_scripts import Script

FIELDS = ("content", "reasoning", "tool_calls", "finish_reason")


@dataclass(frozen=True)
class Diff:
    full: frozenset[str]
    stream: frozenset[str]
    why: str


def diff(full: str = "", stream: str | None = None, why: str = "") -> Diff:
    f = frozenset(full.split())
    return Diff(f, frozenset((full if stream is None else stream).split()), why)


_NO_FILTER = ("vLLM's parsers return every call the model writes; tokenparse drops calls to names the request's "
              "`tools` do not offer (a diagnostic keeps the text), so nothing reaches the client and finish_reason "
              "stays `stop`")

#: (model, script) -> the fields where vLLM's own parsing differs from tokenparse
DIFFERENCES: dict[tuple[str, str], Diff] = {
    ("qwen3", "reasoning_content_two_calls"): diff(why="same message (only the template newlines differ)"),
    ("qwen3", "unknown_tool"): diff("tool_calls finish_reason", why=_NO_FILTER),
    ("qwen3", "tag_as_text"): diff(
        "content reasoning tool_calls finish_reason", "content reasoning",
        why="non-streaming, hermes searches the decoded text, so the quoted `<tool_call>…</tool_call>` becomes a "
            "call (injection). In both modes the qwen3 reasoning parser starts in reasoning whatever the prompt says, "
            "and with no `</think>` the text is reasoning (streaming: all of it; non-streaming: the part before the "
            "quoted tag). tokenparse matches tags by ID (text stays content) and takes the start state from the prompt"),
    ("qwen3", "length_mid_call"): diff(
        "content tool_calls finish_reason", "",
        why="non-streaming, hermes extracts nothing when the last `<tool_call>` is unclosed: both calls, the complete "
            "one too, are returned as raw markup in `content` (finish_reason `length`). tokenparse keeps the complete "
            "call and the streamed part of the cut one (and vLLM's handler then reports `tool_calls`). Streaming agrees"),
    ("qwen3", "prompt_opens_think"): diff(
        why="same message: vLLM's qwen3 parser assumes thinking unless `enable_thinking` is false; tokenparse reads "
            "the `<think>` the template put at the end of the prompt"),
    ("qwen3", "grammar_subtoken_tags"): diff(
        "", "content reasoning tool_calls finish_reason",
        why="the grammar made the model spell the tags with ordinary tokens. vLLM's streaming parser matches tags by "
            "token ID, so its stream has no call and all text as reasoning, while its non-streaming parser matches "
            "text and finds them: vLLM's stream and complete answers disagree. tokenparse turns on sub-token tag "
            "matching for this request only, the same in both modes"),
    ("qwen3", "subtoken_tags_no_grammar"): diff(
        "content reasoning tool_calls finish_reason", "content reasoning",
        why="without a grammar tokenparse keeps ID-only matching: sub-token `<think>`/`<tool_call>` stay content. "
            "vLLM's non-streaming text matching turns them into reasoning and a call; its stream puts all text in "
            "reasoning (no `</think>` token ever arrives)"),
    ("gpt-oss", "reasoning_content_two_calls"): diff(why="same message"),
    ("gpt-oss", "unknown_tool"): diff("tool_calls finish_reason", why=_NO_FILTER),
    ("gpt-oss", "tag_as_text"): diff(why="same: both match Harmony markers by token ID"),
    ("gpt-oss", "constrain_before_recipient"): diff(
        "tool_calls finish_reason",
        why="openai-harmony rejects the header (`unexpected tokens remaining in message header`) and then every "
            "token until the next `<|start|>`; vLLM skips tokens that raise, so the call is lost. tokenparse reads "
            "the recipient wherever it stands in the header"),
    ("gpt-oss", "missing_start"): diff(
        "content",
        why="after `<|end|>` openai-harmony expects `<|start|>`; the final message's tokens all raise and are skipped, "
            "so `Hello.` is lost. tokenparse opens the message at `<|channel|>` and records a diagnostic"),
    ("gpt-oss", "space_after_to"): diff(
        "tool_calls finish_reason",
        why="`to= functions.x` leaves `to=` unparsed in openai-harmony's header; the message is rejected as above and "
            "the call is lost. tokenparse accepts the space (diagnostic)"),
    ("gpt-oss", "length_mid_call"): diff(why="same: both stream the arguments written before the cut"),
}

#: facts each script was written to produce, checked on the tokenparse server's answer
FACTS = {
    "reasoning_content_two_calls": lambda m: [c[0] for c in m.calls] == ["get_weather", "get_time"]
    and bool(m.reasoning) and bool(m.content),
    "unknown_tool": lambda m: m.calls == [] and m.finish_reason == "stop",
    "tag_as_text": lambda m: m.calls == [] and ("<tool_call>" in m.content or "<|channel|>" in m.content),
    "length_mid_call": lambda m: bool(m.calls) and not m.calls[-1][1].endswith("}"),  # cut arguments kept
    "prompt_opens_think": lambda m: (m.reasoning, (m.content or "").strip()) == ("Plan first.", "Answer."),
    "grammar_subtoken_tags": lambda m: m.calls == [("get_weather", '{"city": "Oslo"}')] and m.reasoning == "Plan it.",
    "subtoken_tags_no_grammar": lambda m: m.calls == [] and "<tool_call>" in m.content and not m.reasoning,
    "constrain_before_recipient": lambda m: m.calls == [("get_weather", '{"city": "Paris"}')],
    "missing_start": lambda m: (m.reasoning, m.content) == ("Think.", "Hello."),
    "space_after_to": lambda m: m.calls == [("get_weather", '{"city": "Paris"}')],
}


def check_tokenparse_server(server, script: Script, stream: bool) -> e2e.Outcome:
    got = e2e.run(server, script, stream=stream)
    assert got.token_ids == script.emitted, "the server did not emit the script"
    assert got.prompt_token_ids, "no prompt_token_ids in the response (return_token_ids)"
    want = e2e.expected(script, got.prompt_token_ids)
    assert got.message() == e2e.as_message(want, finish_reason=e2e.served_finish_reason(want, stream=stream))
    assert all(cid.startswith("call_") for cid in got.call_ids), got.call_ids  # tokenparse's ids reach the client
    if stream:
        for index, cid, kind, name in got.first_parts:
            assert cid and kind == "function" and name, (index, cid, kind, name)
        assert not got.identity_repeated
        assert [p[0] for p in got.first_parts] == list(range(len(got.calls)))
    fact = FACTS.get(script.name)
    if fact is not None:
        assert fact(got), (script.name, got.message())
    return got


def _strip(value):
    return value.strip() if isinstance(value, str) else value


def differing_fields(got: e2e.Outcome, want: tuple) -> frozenset[str]:
    ours = [_strip(v) or None for v in want]
    theirs = [_strip(v) or None for v in got.message()]
    return frozenset(f for f, a, b in zip(FIELDS, ours, theirs) if a != b)


def check_builtin_server(server, script: Script, stream: bool) -> None:
    got = e2e.run(server, script, stream=stream)
    assert got.token_ids == script.emitted, "the server did not emit the script"
    want = e2e.expected(script, got.prompt_token_ids)
    want_msg = e2e.as_message(want, finish_reason=e2e.served_finish_reason(want, stream=stream))
    documented = DIFFERENCES[(script.model, script.name)]
    expected_fields = documented.stream if stream else documented.full
    found = differing_fields(got, want_msg)
    assert found == expected_fields, (
        f"vLLM's own parsers now differ from tokenparse in {sorted(found)} (documented: {sorted(expected_fields)}): "
        f"vLLM {got.message()} vs tokenparse {want_msg}. Update DIFFERENCES and the README table with the reason.")


def ids(script: Script) -> str:
    return script.name


STREAM = pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])


def check_responses_api(server, script: Script) -> dict:
    """``/v1/responses`` on the tokenparse server gives the message tokenparse parses
    (for gpt-oss through vLLM's own Harmony loop, on the plugin's StreamableParser)."""
    got = e2e.run_responses(server, script)
    want = e2e.expected(script, None)
    assert got["calls"] == [(c.function.name, c.function.arguments) for c in want.tool_calls]
    assert (got["reasoning"], got["content"]) == (_strip(want.reasoning) or None, _strip(want.content) or None)
    return got
