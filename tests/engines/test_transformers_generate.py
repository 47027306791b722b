"""A real ``model.generate()`` on CPU feeding ``DeltaStreamer``: Qwen3 and gpt-oss.

The models are random-weight ``Qwen3ForCausalLM`` / ``GptOssForCausalLM`` with the real
vocabulary sizes (hidden 64, 2 layers); a ``LogitsProcessor`` forces each row to write a
script (reasoning, content, tool calls) followed by EOS, so the completion is known exactly.
Every test checks the streamed deltas against the complete message, the complete message
against ``model.parse`` of the IDs ``generate()`` returned, and the message against what
the script says.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from transformers_support import (  # noqa: E402
    TOOLS,
    Recorder,
    completions,
    encode,
    force_script_processor,
    generate_in_thread,
    harmony_tokenizer,
    left_padded,
    qwen_tokenizer,
    require,
    tiny_model,
)

import tokenparse  # noqa: E402
from tokenparse import ChatMessage, DeltaMessage  # noqa: E402

REASONING_A = "The user wants the weather in Paris and the time."
CONTENT_A = "Let me check both."
ARGS_A = '{"city": "Paris", "days": 2}'
SCRIPT_A = (
    f"<think>\n{REASONING_A}\n</think>\n\n{CONTENT_A}\n"
    f'<tool_call>\n{{"name": "get_weather", "arguments": {ARGS_A}}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
)
REASONING_B = "No tool is needed: a greeting — short."
CONTENT_B = "Bonjour ! Il fait beau ☀️ à Paris."
SCRIPT_B = f"<think>\n{REASONING_B}\n</think>\n\n{CONTENT_B}"


@pytest.fixture(scope="module")
def engine():
    require("torch")
    require("transformers")
    from tokenparse.integrations.transformers import DeltaStreamer

    tok = qwen_tokenizer()
    lm = tiny_model("qwen3")
    lm.generation_config.eos_token_id = tok.convert_tokens_to_ids("<|im_end|>")
    lm.generation_config.pad_token_id = tok.convert_tokens_to_ids("<|endoftext|>")
    model = tokenparse.load("qwen3", tokenizer=tok)
    return tok, lm, model, DeltaStreamer


def _prompt(tok, question: str) -> list[int]:
    return encode(tok, f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n")


def _strip_ids(message: ChatMessage) -> dict:
    data = message.model_dump()
    for call in data["tool_calls"]:
        call["id"] = None
    return data


def _reassemble(deltas: list[DeltaMessage]) -> dict:
    """Content, reasoning and (name, arguments) per call index, from the deltas alone."""
    content = "".join(d.content or "" for d in deltas)
    reasoning = "".join(d.reasoning or "" for d in deltas)
    calls: dict[int, list[str]] = {}
    for d in deltas:
        for call in d.tool_calls:
            entry = calls.setdefault(call.index, ["", ""])
            if call.function.name:
                assert not entry[0], "a call's name comes once, on its first delta"
                entry[0] = call.function.name
            entry[1] += call.function.arguments or ""
    return {"content": content or None, "reasoning": reasoning or None, "calls": [tuple(calls[i]) for i in sorted(calls)]}


def _summary(message: ChatMessage) -> dict:
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "calls": [(c.function.name, c.function.arguments) for c in message.tool_calls],
    }


def _run(engine, prompts, scripts, *, max_new_tokens=200, **streamer_options):
    tok, lm, model, DeltaStreamer = engine
    eos, pad = lm.generation_config.eos_token_id, lm.generation_config.pad_token_id
    input_ids, mask = left_padded(prompts, pad)
    streamer = DeltaStreamer(model, tools=TOOLS, timeout=60, eos_token_id=eos, pad_token_id=pad, **streamer_options)
    items, out = generate_in_thread(
        lm,
        streamer,
        input_ids=input_ids,
        attention_mask=mask,
        logits_processor=[force_script_processor(scripts, input_ids.shape[1], eos)],
        do_sample=False,
        max_new_tokens=max_new_tokens,
    )
    return streamer, items, completions(out, input_ids.shape[1], {eos}, pad)


def test_batch_one_reasoning_content_two_calls(engine):
    tok, lm, model, _ = engine
    script = encode(tok, SCRIPT_A)
    prompt = _prompt(tok, "Weather in Paris, and the time?")
    streamer, deltas, (ids,) = _run(engine, [prompt], [script])

    assert all(isinstance(d, DeltaMessage) for d in deltas), "batch of one: plain deltas"
    assert ids == script + [lm.generation_config.eos_token_id]
    (message,) = streamer.results()
    assert _summary(message) == {
        "content": CONTENT_A,
        "reasoning": REASONING_A,
        "calls": [("get_weather", ARGS_A), ("get_time", "{}")],
    }
    assert message.finish_reason == "tool_calls"
    assert _strip_ids(message) == _strip_ids(model.parse(ids, TOOLS, prompt_token_ids=prompt))
    assert _reassemble(deltas) == _summary(message)
    # every generated ID is accounted for once, EOS included
    assert [t for d in deltas for t in (d.token_ids or [])] == ids
    # the ids the deltas carry for each call are the message's
    first = [c for d in deltas for c in d.tool_calls if c.id]
    assert [c.id for c in first] == [c.id for c in message.tool_calls]


def test_batch_two_different_scripts_and_lengths(engine):
    tok, lm, model, _ = engine
    scripts = [encode(tok, SCRIPT_A), encode(tok, SCRIPT_B)]
    prompts = [_prompt(tok, "Weather in Paris, and the time?"), _prompt(tok, "Bonjour")]
    assert len(prompts[0]) != len(prompts[1]), "the batch needs left padding"
    streamer, items, ids = _run(engine, prompts, scripts)

    assert all(isinstance(item, tuple) and item[0] in (0, 1) for item in items), "batch: (row, delta) pairs"
    assert len(scripts[1]) < len(scripts[0]), "row 1 finishes first and then receives pads"
    for row in (0, 1):
        assert ids[row] == scripts[row] + [lm.generation_config.eos_token_id]
    messages = streamer.results()
    assert _summary(messages[0])["calls"] == [("get_weather", ARGS_A), ("get_time", "{}")]
    assert _summary(messages[1]) == {"content": CONTENT_B, "reasoning": REASONING_B, "calls": []}
    assert messages[1].finish_reason == "stop"
    for row in (0, 1):
        rows_deltas = [d for r, d in items if r == row]
        assert _reassemble(rows_deltas) == _summary(messages[row])
        assert [t for d in rows_deltas for t in (d.token_ids or [])] == ids[row], "pads after EOS are not fed"
        expected = model.parse(ids[row], TOOLS, prompt_token_ids=prompts[row])
        assert _strip_ids(messages[row]) == _strip_ids(expected)


def test_length_stop_inside_a_call(engine):
    tok, lm, model, _ = engine
    script = encode(tok, SCRIPT_A)
    cut = next(k for k in range(len(script)) if '"city": "Pa' in tok.decode(script[:k]))  # inside the arguments
    prompt = _prompt(tok, "Weather?")
    streamer, deltas, (ids,) = _run(engine, [prompt], [script], max_new_tokens=cut)

    assert ids == script[:cut], "no EOS: generate stopped at max_new_tokens"
    (message,) = streamer.results()
    assert message.finish_reason == "length"
    expected = model.parse(ids, TOOLS, prompt_token_ids=prompt, finish_reason="length")
    assert _strip_ids(message) == _strip_ids(expected)
    assert message.reasoning == REASONING_A and message.content == CONTENT_A
    # the open call keeps its name and the argument text written so far; nothing is invented
    (call,) = message.tool_calls
    assert call.function.name == "get_weather"
    assert call.function.arguments and ARGS_A.startswith(call.function.arguments)
    assert _reassemble(deltas) == _summary(message)


def test_results_only_without_a_consumer(engine):
    tok, lm, model, DeltaStreamer = engine
    eos, pad = lm.generation_config.eos_token_id, lm.generation_config.pad_token_id
    script = encode(tok, SCRIPT_B)
    prompt = _prompt(tok, "Bonjour")
    streamer = DeltaStreamer(model, queue_deltas=False)  # EOS/pad from the tokenizer's literals
    input_ids, mask = left_padded([prompt], pad)
    out = lm.generate(
        input_ids=input_ids,
        attention_mask=mask,
        streamer=streamer,
        logits_processor=[force_script_processor([script], input_ids.shape[1], eos)],
        do_sample=False,
        max_new_tokens=100,
    )
    (ids,) = completions(out, input_ids.shape[1], {eos}, pad)
    assert ids == script + [eos]
    (message,) = streamer.results()
    assert _strip_ids(message) == _strip_ids(model.parse(ids, prompt_token_ids=prompt))
    assert streamer._queue.empty()


def test_assisted_decoding_several_ids_per_step(engine):
    """Prompt-lookup decoding proposes n-grams from the prompt: accepted ones arrive as one
    ``[1, n]`` step."""
    tok, lm, model, DeltaStreamer = engine
    eos, pad = lm.generation_config.eos_token_id, lm.generation_config.pad_token_id
    script = encode(tok, SCRIPT_A)
    prompt = _prompt(tok, "Repeat: " + SCRIPT_A.replace("<think>", "").replace("</think>", ""))
    streamer = DeltaStreamer(model, tools=TOOLS, timeout=60, eos_token_id=eos, pad_token_id=pad)
    recorder = Recorder(streamer)
    input_ids, mask = left_padded([prompt], pad)
    items, out = generate_in_thread(
        lm,
        recorder,
        consume=streamer,
        input_ids=input_ids,
        attention_mask=mask,
        logits_processor=[force_script_processor([script], input_ids.shape[1], eos)],
        do_sample=False,
        max_new_tokens=200,
        prompt_lookup_num_tokens=6,
    )
    assert any(len(shape) == 2 and shape[1] > 1 for shape in recorder.shapes[1:]), recorder.shapes
    (ids,) = completions(out, input_ids.shape[1], {eos}, pad)
    assert ids == script + [eos]
    (message,) = streamer.results()
    assert _strip_ids(message) == _strip_ids(model.parse(ids, TOOLS, prompt_token_ids=prompt))
    assert _reassemble(items) == _summary(message)


# ------------------------------------------------------------------------------------- gpt-oss

ANALYSIS = "User asks for Paris weather. Call the tool."
CALL_ARGS = '{"city":"Paris"}'
HARMONY_SCRIPT = (
    f"<|channel|>analysis<|message|>{ANALYSIS}<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    f"<|message|>{CALL_ARGS}<|call|>"
)
HARMONY_ANSWER = "<|channel|>final<|message|>It is sunny in Paris.<|return|>"


@pytest.fixture(scope="module")
def gpt_oss_engine():
    require("torch")
    require("transformers")
    from tokenparse.integrations.transformers import DeltaStreamer

    tok = harmony_tokenizer()
    lm = tiny_model("gpt-oss")
    # gpt-oss's generation_config: EOS = <|return|>, <|endoftext|>, <|call|>; pad = <|endoftext|>
    lm.generation_config.eos_token_id = [200002, 199999, 200012]
    lm.generation_config.pad_token_id = 199999
    model = tokenparse.load("gpt-oss", tokenizer=tok)
    return tok, lm, model, DeltaStreamer


def test_gpt_oss_batch_two(gpt_oss_engine):
    tok, lm, model, DeltaStreamer = gpt_oss_engine
    eos, pad = lm.generation_config.eos_token_id, lm.generation_config.pad_token_id
    prompt = encode(tok, "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant")
    scripts = [encode(tok, HARMONY_SCRIPT), encode(tok, HARMONY_ANSWER)]
    streamer = DeltaStreamer(model, tools=TOOLS, timeout=60, eos_token_id=eos, pad_token_id=pad)
    input_ids, mask = left_padded([prompt, prompt], pad)
    items, out = generate_in_thread(
        lm,
        streamer,
        input_ids=input_ids,
        attention_mask=mask,
        logits_processor=[force_script_processor(scripts, input_ids.shape[1], eos[0])],
        do_sample=False,
        max_new_tokens=100,
    )
    ids = completions(out, input_ids.shape[1], set(eos), pad)
    assert ids[0] == scripts[0], "<|call|> is an EOS: the row stops there"
    assert ids[1] == scripts[1]
    first, second = streamer.results()
    assert _summary(first) == {"content": None, "reasoning": ANALYSIS, "calls": [("get_weather", CALL_ARGS)]}
    assert _summary(second) == {"content": "It is sunny in Paris.", "reasoning": None, "calls": []}
    for row, message in enumerate((first, second)):
        assert _strip_ids(message) == _strip_ids(model.parse(ids[row], TOOLS, prompt_token_ids=prompt))
        assert _reassemble([d for r, d in items if r == row]) == _summary(message)


def test_gpt_oss_length_stop_in_arguments(gpt_oss_engine):
    tok, lm, model, DeltaStreamer = gpt_oss_engine
    eos, pad = lm.generation_config.eos_token_id, lm.generation_config.pad_token_id
    prompt = encode(tok, "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant")
    script = encode(tok, HARMONY_SCRIPT)
    cut = len(script) - 3
    streamer = DeltaStreamer(model, tools=TOOLS, eos_token_id=eos, pad_token_id=pad, queue_deltas=False)
    input_ids, mask = left_padded([prompt], pad)
    out = lm.generate(
        input_ids=input_ids,
        attention_mask=mask,
        streamer=streamer,
        logits_processor=[force_script_processor([script], input_ids.shape[1], eos[0])],
        do_sample=False,
        max_new_tokens=cut,
    )
    (ids,) = completions(out, input_ids.shape[1], set(eos), pad)
    assert ids == script[:cut]
    (message,) = streamer.results()
    assert message.finish_reason == "length"
    assert _strip_ids(message) == _strip_ids(model.parse(ids, TOOLS, prompt_token_ids=prompt, finish_reason="length"))
    assert message.tool_calls[0].function.name == "get_weather"
    assert CALL_ARGS.startswith(message.tool_calls[0].function.arguments)
    json.dumps(message.model_dump())  # JSON-ready
