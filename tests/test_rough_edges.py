"""What a new user meets first with bad input: each message says what is wrong in the user's
terms (no internal type names), names the file and line, and the wrong profile is flagged."""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

import tokenparse
from tokenparse.cli import main

ROOT = Path(__file__).resolve().parents[1]
CALL_TRACE = ROOT / "examples" / "gpt-oss-weather-call.jsonl"


def _run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_negative_id_in_strict_mode_is_named_as_a_negative_id(tmp_path, capsys):
    path = tmp_path / "ids.json"
    path.write_text("[1, -5, 2]")
    status, _, err = _run(capsys, "decode", str(path), "--model", "gpt-oss", "--strict", "--complete")
    assert status == 2
    assert "token ID -5 is outside the vocabulary" in err and "at token 1" in err
    assert "InvalidItem" not in err


@pytest.mark.parametrize("bad, said", [(-5, "token ID -5 is outside the vocabulary"), (True, "got bool True")])
def test_the_api_names_bad_ids_in_the_users_terms(bad, said):
    model = tokenparse.load("gpt-oss")
    with pytest.raises(tokenparse.InvalidTokenError) as info:
        model.parse([200005, bad], strict=True)
    assert said in str(info.value) and "InvalidItem" not in str(info.value)
    lenient = tokenparse.load("gpt-oss").parser()
    lenient.feed([200005, bad])
    lenient.finish()
    assert all("InvalidItem" not in d.message for d in lenient.diagnostics)
    assert any(said in d.message for d in lenient.diagnostics)


@pytest.mark.parametrize("rows", ["hello", b"\x01\x02", {"token_ids": [1, 2]}])
def test_parse_batch_refuses_a_single_string(rows):
    model = tokenparse.load("gpt-oss")
    with pytest.raises(TypeError, match="rows must be a sequence of token-ID sequences"):
        model.parse_batch(rows)


def test_parse_batch_still_takes_rows():
    model = tokenparse.load("gpt-oss")
    ids = [t for line in CALL_TRACE.read_text().splitlines() for t in json.loads(line)]
    batch, single = model.parse_batch([ids])[0], model.parse(ids)
    assert batch.model_dump(exclude={"tool_calls"}) == single.model_dump(exclude={"tool_calls"})
    assert [c.function for c in batch.tool_calls] == [c.function for c in single.tool_calls] != []


@pytest.mark.parametrize("lines, line, said", [
    (['{"token_ids": [1, 2]}', '{"token_ids": [1, 2'], 2, "not JSON"),
    (['{"token_ids": [1, 2]}', "", '{"token_ids": [3], "tools": 5}'], 3, "tools must be a list"),
    (['{"token_ids": [1]}', '"text"'], 2, "expected an object with a token_ids field"),
])
def test_batch_errors_name_the_file_and_line(tmp_path, capsys, lines, line, said):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    status, _, err = _run(capsys, "decode", "--batch", str(path), "--out", str(tmp_path / "out.jsonl"), "--model", "qwen3")
    assert status == 2
    assert f"{path}: line {line}: {said}" in err


def test_ids_of_another_model_are_flagged(capsys):
    """gpt-oss IDs decoded as Qwen3: garbage text, and a warning that says why."""
    status, out, err = _run(capsys, "decode", str(CALL_TRACE), "--model", "qwen3", "--complete")
    assert status == 0 and out
    assert "warning:" in err and "not valid for profile 'qwen3'" in err and "tokenparse detect" in err


def test_the_right_profile_gets_no_warning(capsys):
    status, _, err = _run(capsys, "decode", str(CALL_TRACE), "--model", "gpt-oss", "--complete")
    assert status == 0 and err == ""


def test_detect_names_the_profile_of_a_tokenizer_file(tmp_path, capsys):
    from tokenparse.tokenizers import ensure_o200k_dir

    path = os.path.join(ensure_o200k_dir(), "o200k_base.tiktoken")
    status, out, err = _run(capsys, "detect", path)
    # a bare o200k file has no Harmony tokens: no profile fits, and the error line says so
    assert status == 2 and "no built-in profile fits" in err and "Traceback" not in err
    assert out == ""


def test_the_vllm_plugin_logs_under_vllms_logger():
    """vLLM's handler prints INFO lines of its own logger tree only; the plugin's line about
    the chosen profile must be in it (read from the source: vLLM is not installed here)."""
    tree = ast.parse((ROOT / "tokenparse" / "integrations" / "vllm.py").read_text(encoding="utf-8"))
    names = [node.args[0].value for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "getLogger"
             and node.args and isinstance(node.args[0], ast.Constant)]
    assert names and all(name.startswith("vllm.") for name in names)
    source = (ROOT / "tokenparse" / "integrations" / "vllm.py").read_text(encoding="utf-8")
    assert "with profile %s" in source


# -- building a completion's IDs by hand (tokenparse.testing) ---------------------------------


def test_completion_ids_put_tags_in_as_their_ids():
    from tokenparse.testing import completion_ids, tag

    model = tokenparse.load("qwen3")
    ids = completion_ids(model, "Checking.", tag("<tool_call>"), '{"name": "get_time", "arguments": {}}',
                         tag("</tool_call>"))
    assert model.table.id_of("<tool_call>") in ids and model.table.id_of("</tool_call>") in ids
    assert model.parse(ids).tool_calls[0].function.name == "get_time"
    # the same text encoded whole keeps the tags text: no call, the text is content
    written = model.table.encode('Checking.<tool_call>{"name": "get_time", "arguments": {}}</tool_call>')
    assert model.table.id_of("<tool_call>") not in written
    assert model.parse(written).tool_calls == []
    # a table works too, and gives the same IDs
    assert completion_ids(model.table, "Checking.", tag("<tool_call>")) == ids[: len(model.table.encode("Checking.")) + 1]


def test_completion_ids_refuses_what_is_not_one_token():
    from tokenparse.testing import completion_ids, tag

    model = tokenparse.load("qwen3")
    with pytest.raises(tokenparse.TokenizerError, match="'<function=' is not one token"):
        completion_ids(model, tag("<function="))
    with pytest.raises(TypeError, match="expected text"):
        completion_ids(model, 42)
    with pytest.raises(TypeError, match="non-empty str"):
        tag("")
