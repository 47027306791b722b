"""``tokenparse decode`` on bad input: one clear line on stderr and a nonzero exit, never a
traceback, whatever the input, tools or prompt file holds."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tokenparse.cli import main

DEEP = "[" * 100_000 + "]" * 100_000  # past the interpreter's recursion limit
MODERATELY_DEEP = "[" * 150 + "]" * 150  # loads, but deeper than any token-ID input or tool schema
HUGE = "9" * 5000  # past CPython's int <-> str conversion limit


def _tool(parameters):
    return [{"type": "function", "function": {"name": "f", "parameters": parameters}}]


BAD_TOOLS = {
    "properties as a list": _tool({"type": "object", "properties": ["a", "b"]}),
    "properties as a string": _tool({"type": "object", "properties": "a"}),
    "parameters as a list": _tool([1, 2]),
    "a parameter schema that is a number": _tool({"type": "object", "properties": {"a": 5}}),
    "a parameter type that is a number": _tool({"type": "object", "properties": {"a": {"type": 5}}}),
    "an enum that is a number": _tool({"type": "object", "properties": {"a": {"enum": 5}}}),
    "anyOf as an object": _tool({"type": "object", "properties": {"a": {"anyOf": {"type": "string"}}}}),
    "a tool that is a number": [5],
    "a function that is a list": [{"type": "function", "function": []}],
    "a tool without a name": [{"type": "function", "function": {"parameters": {}}}],
    "tools that are a number": 5,
    "tools nested deeply": json.loads(MODERATELY_DEEP),
}


@pytest.fixture
def qwen3_coder_call(tmp_path):
    """A Qwen3-Coder call with an XML parameter: the path that reads the tool's schema."""
    import tokenparse

    table = tokenparse.load("qwen3-coder").table
    ids = (
        [table.id_of("<tool_call>")]
        + table.encode("\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n")
        + [table.id_of("</tool_call>")]
    )
    path = tmp_path / "call.json"
    path.write_text(json.dumps(ids))
    return path


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("tokenparse: error: "), lines[0]
    assert "Traceback" not in err
    assert len(lines[0]) < 400
    return lines[0]


def _run(argv, capsys) -> tuple[int, str]:
    code = main(argv, out=io.StringIO())
    return code, _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("case", sorted(BAD_TOOLS))
def test_malformed_tool_schemas(case, tmp_path, qwen3_coder_call, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(BAD_TOOLS[case]))
    for model in ("qwen3-coder", "gpt-oss"):
        code, line = _run(["decode", str(qwen3_coder_call), "--model", model, "--tools", str(tools)], capsys)
        assert code == 2
        assert str(tools) in line


@pytest.mark.parametrize(
    "text, says",
    [
        (f"[{HUGE}]", "more than 4300 digits"),
        (f"[[1], [{HUGE}]]", "more than 4300 digits"),
        (f'{{"token_ids": [1]}}\n{{"token_ids": [{HUGE}]}}', "line 2: a number with more than 4300 digits"),
        (f"1 2 {HUGE}", "not a token ID: '9999"),
        (DEEP, "nested too deeply"),
        ("[1]\n" + DEEP, "line 2: JSON nested too deeply"),
        (MODERATELY_DEEP, "nested deeper than"),
        ('{"token_ids": ' + DEEP + "}", "nested too deeply"),
        ("[1, 2", "not JSON"),
        ('{"token_ids": "1 2"}', "expected an array of integer token IDs"),
        ("[1, true]", "expected an array of integer token IDs"),
        ("[1e3]", "expected an array of integer token IDs"),
        ("1 2 3.5", "not a token ID: '3.5'"),
    ],
)
def test_bad_token_id_input(text, says, tmp_path, capsys):
    path = tmp_path / "ids.txt"
    path.write_text(text)
    code, line = _run(["decode", str(path)], capsys)
    assert code == 2
    assert says in line and str(path) in line
    # the same file as a prompt is refused the same way
    ok = tmp_path / "ok.json"
    ok.write_text("[1, 2]")
    code, line = _run(["decode", str(ok), "--prompt", str(path)], capsys)
    assert code == 2 and says in line


def test_bad_files(tmp_path, capsys):
    binary = tmp_path / "ids.bin"
    binary.write_bytes(b"\xff\xfe[1]")
    code, line = _run(["decode", str(binary)], capsys)
    assert code == 2 and "not UTF-8" in line
    code, line = _run(["decode", str(tmp_path)], capsys)  # a directory
    assert code == 2 and str(tmp_path) in line
    ok = tmp_path / "ok.json"
    ok.write_text("[1]")
    code, line = _run(["decode", str(ok), "--tools", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "missing.json" in line
    tools = tmp_path / "tools.json"
    tools.write_text('[{"type": "function", "function": {"name": "f"}},')
    code, line = _run(["decode", str(ok), "--tools", str(tools)], capsys)
    assert code == 2 and "not JSON" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["decode", "-", "--chunk", "0"],
        ["decode", "-", "--chunk", HUGE],
        ["decode", "-", "--chunk", "x"],
        ["decode", "-", "--format", "nope"],
        ["decode", "-", "--no-such-option"],
        ["nope"],
        [],
    ],
)
def test_bad_arguments_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv, out=io.StringIO())
    assert exit_info.value.code == 2
    _one_error_line(capsys.readouterr().err)


def test_strict_error_quoting_a_huge_id_stays_one_short_line(tmp_path, capsys):
    path = tmp_path / "ids.json"
    path.write_text("[" + "9" * 4000 + "]")
    code, line = _run(["decode", str(path), "--strict"], capsys)
    assert code == 2 and line.endswith("...")


def test_unexpected_failure_is_one_line(tmp_path, capsys, monkeypatch):
    """The command's boundary catches what nothing below it anticipated."""
    import tokenparse

    def broken(*args, **kwargs):
        raise AttributeError("'list' object has no attribute 'get'")

    monkeypatch.setattr(tokenparse.Model, "parser", broken)
    path = tmp_path / "ids.json"
    path.write_text("[1]")
    code, line = _run(["decode", str(path)], capsys)
    assert code == 1 and "internal error (AttributeError" in line


@pytest.mark.parametrize(
    "stdin, extra",
    [
        (DEEP, []),
        (f"[{HUGE}]", []),
        ("[1]", ["--model", "qwen3-coder", "--tools", "TOOLS"]),
    ],
)
def test_real_process_has_no_traceback(stdin, extra, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(BAD_TOOLS["properties as a list"]))
    argv = [str(tools) if a == "TOOLS" else a for a in extra]
    done = subprocess.run(
        [sys.executable, "-m", "tokenparse", "decode", "-", *argv],
        input=stdin, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    _one_error_line(done.stderr)


def test_closed_pipe_is_quiet(tmp_path, encode_harmony):
    """`tokenparse decode big | head -1`: the reader leaving is not an error worth a traceback."""
    ids = encode_harmony("<|channel|>final<|message|>" + "word " * 20000 + "<|return|>")
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(ids))
    code = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'tokenparse', 'decode', {str(path)!r}, '--chunk', '1'],"
        " stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "p.stdout.readline(); p.stdout.close()\n"
        "err = p.stderr.read().decode(); p.wait()\n"
        "print(p.returncode); print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    returncode, _, err = done.stdout.partition("\n")
    assert "Traceback" not in err, err
    assert returncode.strip() == "1"
