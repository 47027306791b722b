"""Regenerate ``gpt-oss-malformed.json``: a gpt-oss completion with two protocol slips.

The second message has no ``<|start|>`` before its role word, and its header carries a
dangling ``to`` that names nothing. Encoded with the real o200k_harmony encoding; the
completion follows a prompt that ends in ``<|start|>assistant``. Used by the README's
``tokenparse explain`` example.

    python examples/make_gpt_oss_malformed.py
"""
from __future__ import annotations

import json
import os

from tokenparse.tokenizers import ensure_o200k_dir

os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
from openai_harmony import HarmonyEncodingName, load_harmony_encoding  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
text = (
    "<|channel|>analysis<|message|>Need the forecast for Tokyo.<|end|>"
    "assistant to<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    '{"city": "東京"}<|call|>'
)
ids = enc.encode(text, allowed_special="all")
with open(os.path.join(HERE, "gpt-oss-malformed.json"), "w", encoding="utf-8") as f:
    json.dump(ids, f)
print(f"gpt-oss-malformed.json: {len(ids)} tokens")
