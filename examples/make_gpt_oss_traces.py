"""Regenerate the bundled gpt-oss traces with the real o200k_harmony encoding.

A two-turn weather conversation rendered by openai-harmony: turn 1 reasons and calls
``get_weather``; turn 2 (after the tool result) reasons and answers in Japanese with emoji.
Each trace holds what the engine sampled after the prompt's ``<|start|>assistant``, cut into
engine steps of varying size (as speculative decoding produces), one JSON array per line.

    python examples/make_gpt_oss_traces.py
"""
from __future__ import annotations

import json
import os
import random

from tokenparse.tokenizers import ensure_o200k_dir

os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
from openai_harmony import (  # noqa: E402
    Author,
    Conversation,
    DeveloperContent,
    HarmonyEncodingName,
    Message,
    Role,
    SystemContent,
    ToolDescription,
    load_harmony_encoding,
)

HERE = os.path.dirname(os.path.abspath(__file__))
enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
START, CALL, RETURN, END = 200006, 200012, 200002, 200007

tools = json.load(open(os.path.join(HERE, "tools.json"), encoding="utf-8"))
developer = DeveloperContent.new().with_instructions("Answer in the user's language.").with_function_tools(
    [ToolDescription.new(t["function"]["name"], t["function"]["description"], parameters=t["function"]["parameters"])
     for t in tools]
)
user = Message.from_role_and_content(Role.USER, "明日の東京の天気は？傘は必要ですか？")
turn1 = [
    Message.from_role_and_content(
        Role.ASSISTANT,
        "The user asks (in Japanese) about tomorrow's weather in Tokyo and whether an umbrella is needed. "
        "I should call get_weather with city Tokyo and days=1, metric units.",
    ).with_channel("analysis"),
    Message.from_role_and_content(Role.ASSISTANT, '{"city": "東京", "days": 1, "units": "metric"}')
    .with_channel("commentary")
    .with_recipient("functions.get_weather")
    .with_content_type("<|constrain|>json"),
]
tool_result = Message.from_author_and_content(
    Author.new(Role.TOOL, "functions.get_weather"),
    '{"city": "東京", "forecast": [{"day": "tomorrow", "condition": "rain", "high_c": 14, "low_c": 9, "precip_pct": 80}]}',
).with_channel("commentary").with_recipient("assistant")
turn2 = [
    Message.from_role_and_content(
        Role.ASSISTANT,
        "Rain tomorrow with 80% precipitation, high 14°C, low 9°C. Answer in Japanese, recommend an umbrella.",
    ).with_channel("analysis"),
    Message.from_role_and_content(
        Role.ASSISTANT,
        "明日の東京は雨 ☔ の予報です。最高気温は14°C、最低気温は9°C、降水確率は80%です。"
        "傘を持って行くことをおすすめします 🌂。",
    ).with_channel("final"),
]


def completion(messages: list[Message], last_token: int) -> list[int]:
    ids: list[int] = []
    for message in messages:
        ids += enc.render(message)
    assert ids[:2] == [START, enc.encode("assistant")[0]]
    assert ids[-1] in (END, CALL)
    return ids[2:-1] + [last_token]  # the prompt already ends in <|start|>assistant


def write(name: str, prompt: list[Message], messages: list[Message], last: int, seed: int) -> None:
    system = Message.from_role_and_content(Role.SYSTEM, SystemContent.new())
    dev = Message.from_role_and_content(Role.DEVELOPER, developer)
    prompt_ids = enc.render_conversation_for_completion(Conversation.from_messages([system, dev, *prompt]), Role.ASSISTANT)
    ids = completion(messages, last)
    rng = random.Random(seed)
    steps, i = [], 0
    while i < len(ids):
        n = rng.choice([1, 1, 1, 2, 3, 4])
        steps.append(ids[i : i + n])
        i += n
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for step in steps:
            f.write(json.dumps(step) + "\n")
    with open(os.path.join(HERE, name.replace(".jsonl", ".prompt.json")), "w", encoding="utf-8") as f:
        json.dump(prompt_ids, f)
    print(f"{name}: {len(ids)} tokens in {len(steps)} steps; prompt {len(prompt_ids)} tokens")


write("gpt-oss-weather-call.jsonl", [user], turn1, CALL, seed=1)
write("gpt-oss-weather-answer.jsonl", [user, *turn1, tool_result], turn2, RETURN, seed=2)
