"""``model.gbnf(...)`` checked by llama.cpp itself (``llama-server`` built from the vendored tree),
not only through a Lark translation run by llguidance (tests/test_grammars.py).

* Profiles whose vocabulary is that of a GGUF we build (the tiny Qwen3 and gpt-oss GGUFs of
  build_gguf.py, each carrying its tokenizer's real vocabulary and special tokens): every
  profile whose registry vocabulary is Qwen3's (qwen3, qwen3-coder, holo2) or o200k Harmony
  (gpt-oss) is loaded with the GGUF's own ``tokenizer.json``; for each tool choice (auto,
  required, named, none) llama-server accepts the grammar (no "failed to parse grammar"),
  and sampling under the forced forms (required, named) from the random weights, no script,
  yields IDs that tokenparse parses, by ID only, into calls to offered tools with
  schema-valid arguments. The grammar is built with ``end_token_ids`` = llama.cpp's
  end-of-generation tokens of that vocabulary (a grammar cannot match one: see
  tokenparse/grammars/ends.py); Harmony's ``<|call|>`` is then the only end not banned.
* Every other profile (its vocabulary is not one a GGUF here has): llama-server, serving the
  Qwen3 GGUF, parses each form of the profile's GBNF (syntax, every rule defined, no left
  recursion: llama.cpp's ``llama_grammar_init_impl``); its ``<[id]>`` references name the
  profile's own IDs, which this vocabulary does not have, so nothing is sampled or parsed
  for them (a sampling error after parsing is accepted; a parse error is not).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from llamacpp_support import LlamaServer

import tokenparse

jsonschema = pytest.importorskip("jsonschema")

TOOLS = [
    {"type": "function", "function": {"name": "set_alarm", "parameters": {
        "type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Lima"]}}, "required": ["city"]}}},
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
NAMED = {"type": "function", "function": {"name": "get_weather"}}
CHOICES = {"auto": "auto", "required": "required", "named": NAMED, "none": "none"}
SEEDS = range(4)
N_PREDICT = 64
#: the GGUFs built here and the registry vocabulary (table name) each one carries
GGUF_VOCABS = {"qwen3": "qwen3", "gpt-oss": "o200k_harmony"}


def _vocab_profiles() -> dict[str, list[str]]:
    """Registry profiles per GGUF model, by their registry vocabulary (tests/registry_models.py)."""
    from registry_models import row_model

    out: dict[str, list[str]] = {"qwen3": [], "gpt-oss": [], "other": []}
    for name in tokenparse.profile_names():
        table = row_model(name).table.name
        gguf = next((model for model, vocab in GGUF_VOCABS.items() if vocab == table), "other")
        out[gguf].append(name)
    return out


PROFILES = _vocab_profiles()


def _post(server: LlamaServer, body: dict) -> tuple[int, dict | str]:
    request = urllib.request.Request(server.base_url + "/completion", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


@pytest.fixture(scope="module", params=["qwen3", "gpt-oss"])
def gguf(request, llama_server_bin, llamacpp_models, tmp_path_factory):
    name = request.param
    server = LlamaServer(llama_server_bin, llamacpp_models[name], tmp_path_factory.mktemp(f"llamacpp-gbnf-{name}"),
                         f"gbnf-{name}").start()
    try:
        yield name, server, llamacpp_models[name].parent / name
    finally:
        server.stop()


def _eog(model) -> list[int]:
    from tokenparse.serve.upstreams.llamacpp import EOG_TEXTS

    table = model.table
    wanted = {text.encode() for text in EOG_TEXTS}
    ids = {table.id_of(t) for t in EOG_TEXTS} | {i for i, p in enumerate(table.pieces) if p is not None and p in wanted}
    return sorted(i for i in ids if i is not None)


def _prompt(model, name: str) -> list[int]:
    if name == "gpt-oss":
        from tokenparse.serve.render_harmony import load_harmony_encoding_offline

        return load_harmony_encoding_offline().encode("<|start|>user<|message|>Act.<|end|><|start|>assistant",
                                                      allowed_special="all")
    # the template's assistant turn with thinking switched off (the grammar then has no reasoning)
    text = "<|im_start|>user\nAct.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    specials = sorted(model.table.added, key=len, reverse=True)
    ids: list[int] = []
    while text:
        literal = next((s for s in specials if text.startswith(s)), None)
        if literal is not None:
            ids.append(model.table.added[literal])
            text = text[len(literal):]
            continue
        end = min((i for i in (text.find(s, 1) for s in specials) if i > 0), default=len(text))
        ids.extend(model.table.encode(text[:end]))
        text = text[end:]
    return ids


def test_gguf_vocabulary_profiles_are_found():
    assert {"qwen3", "qwen3-coder"} <= set(PROFILES["qwen3"]) and "gpt-oss" in PROFILES["gpt-oss"]


def test_llama_server_samples_the_profiles_gbnf(gguf):
    name, server, folder = gguf
    for profile in PROFILES[name]:
        model = tokenparse.load(profile, tokenizer=str(folder / "tokenizer.json"))
        eog = _eog(model)
        reasoning = name == "gpt-oss"  # Harmony: analysis allowed; Qwen3-vocabulary prompts close <think>
        prompt = _prompt(model, name)
        for label, choice in CHOICES.items():
            grammar = model.gbnf(TOOLS, choice, reasoning=reasoning, end_token_ids=eog)
            forced = label in ("required", "named")
            seeds = SEEDS if forced else SEEDS[:1]
            finished = 0
            # the turn ends with the format's own end token; llama.cpp's other EOG tokens are banned
            ends = ("<|call|>",) if name == "gpt-oss" and forced else ("<|call|>", "<|return|>") if name == "gpt-oss" \
                else ("<|im_end|>",)
            allowed = {model.table.id_of(t) for t in ends}
            bias = [[i, False] for i in eog if i not in allowed]
            for seed in seeds:
                status, out = _post(server, {"prompt": prompt, "grammar": grammar, "n_predict": N_PREDICT,
                                             "seed": seed, "temperature": 1.0, "return_tokens": True,
                                             "logit_bias": bias})
                assert status == 200, (profile, label, seed, status, str(out)[:300])
                assert isinstance(out, dict)
                ids = out["tokens"]
                if not forced:
                    continue  # accepted and sampled; free text from random weights has nothing to check
                if out["stop_type"] != "eos":
                    continue  # cut by n_predict (gpt-oss inside its analysis message)
                finished += 1
                parser = model.parser(TOOLS, choice, prompt)
                parser.feed(ids)
                parser.finish()
                message = parser.result()
                assert message.tool_calls, (profile, label, seed, ids)
                for call in message.tool_calls:
                    assert call.function.name in SCHEMAS and (label == "required" or call.function.name == "get_weather")
                    jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])
                assert not [d for d in parser.diagnostics if d.code == "unknown_tool"], parser.diagnostics
            if forced:
                assert finished >= 1, (profile, label)


@pytest.fixture(scope="module")
def qwen_server(llama_server_bin, llamacpp_models, tmp_path_factory):
    server = LlamaServer(llama_server_bin, llamacpp_models["qwen3"], tmp_path_factory.mktemp("llamacpp-gbnf-other"),
                         "gbnf-other").start()
    try:
        yield server
    finally:
        server.stop()


def test_llama_server_parses_other_vocabularies_gbnf(qwen_server):
    from registry_models import row_model

    assert len(PROFILES["other"]) > 30
    for profile in PROFILES["other"]:
        model = row_model(profile)
        for label, choice in CHOICES.items():
            for reasoning in (True, False):
                grammar = model.gbnf(TOOLS, choice, reasoning=reasoning)
                status, out = _post(qwen_server, {"prompt": [1], "grammar": grammar, "n_predict": 1})
                # 400 "failed to parse grammar" is the parse error; a 500 after parsing comes from
                # sampling this vocabulary under another vocabulary's token references
                assert status != 400 and "failed to parse grammar" not in str(out), \
                    (profile, label, reasoning, str(out)[:300])
