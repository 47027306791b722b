"""Ray Data on a local Ray instance: ``map_batches(TokenParseBatch, concurrency=2)`` over a
Parquet dataset gives, row for row, what ``model.parse`` gives.

Real in CI (``ray[data]`` is in the test extra): skipped locally when Ray is missing, a
failure when ``CI`` is set. Ray on two cores is slower than a plain loop, so this checks
results; ``benchmarks/bench_batch.py`` reports the speed figures.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from test_adapters_dialects import OFFERED  # noqa: E402
from test_snapshot import GPT_OSS_TEXT  # noqa: E402

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray
except ImportError as missing:  # pragma: no cover - depends on the environment
    if os.environ.get("CI"):
        raise RuntimeError(f"Ray Data tests must run in CI: {missing}") from missing
    pytest.skip(f"ray[data] / pyarrow not installed: {missing}", allow_module_level=True)

from tokenparse.integrations.ray import TokenParseBatch  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def rollouts(encode_harmony, tmp_path_factory):
    ids = encode_harmony(GPT_OSS_TEXT)
    weather_only = [t for t in OFFERED if t["function"]["name"] == "get_weather"]
    rows = []
    for i in range(24):
        cut = len(ids) - (i % 6) * (len(ids) // 8)
        rows.append({"uid": i, "token_ids": ids[:cut], "tools": json.dumps(weather_only if i % 3 else OFFERED)})
    path = tmp_path_factory.mktemp("rollouts") / "rollouts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return rows, str(path)


def expected(model, row):
    message = model.parse(row["token_ids"], tools=json.loads(row["tools"]))
    return (row["uid"], message.content, message.reasoning, message.finish_reason,
            [(c.function.name, c.function.arguments) for c in message.tool_calls])


def got(record):
    return (record["uid"], record["content"], record["reasoning"], record["finish_reason"],
            [(c["function"]["name"], c["function"]["arguments"]) for c in record["tool_calls"]])


def test_map_batches_matches_parse(local_ray, rollouts, gpt_oss):
    rows, path = rollouts
    ds = ray.data.read_parquet(path, override_num_blocks=2)
    # two actors of half a CPU each: the other CPU stays free for the Parquet read tasks
    # (two whole-CPU actors on a two-CPU instance would leave the reads unscheduled)
    ds = ds.map_batches(TokenParseBatch, fn_constructor_kwargs={"profile": "gpt-oss"}, concurrency=2,
                        num_cpus=0.5, batch_size=5, batch_format="pyarrow")
    records = sorted(ds.take_all(), key=lambda r: r["uid"])
    assert [got(r) for r in records] == [expected(gpt_oss, row) for row in rows]
    assert all(r["error"] is None for r in records)
    assert any(r["tool_calls"] for r in records) and any(r["diagnostics"] for r in records)
    assert set(records[0]) >= {"uid", "token_ids", "content", "reasoning", "tool_calls", "finish_reason",
                               "reasoning_tokens", "completion_tokens", "diagnostics", "error"}


def test_the_callable_alone_strict_errors_and_plain_dicts(gpt_oss, encode_harmony):
    ids = encode_harmony(GPT_OSS_TEXT)
    mapper = TokenParseBatch("gpt-oss", strict=True, tools=OFFERED, keep_columns=False)
    table = mapper(pa.table({"token_ids": [ids, ids + [10**9]]}))
    assert table.column_names[0] == "content"
    errors = table.column("error").to_pylist()
    assert errors[0] is not None  # delete_all is not offered: strict mode stops that row
    assert "outside the vocabulary" in errors[1] or errors[1] is not None
    np = pytest.importorskip("numpy")
    numpy_batch = {"token_ids": np.array([np.array(ids[:20]), np.array(ids)], dtype=object)}  # Ray's numpy format
    lenient = TokenParseBatch("gpt-oss")(numpy_batch)
    assert lenient.column("finish_reason").to_pylist() == [gpt_oss.parse(ids[:20]).finish_reason, "tool_calls"]
    with pytest.raises(KeyError, match="token_ids"):
        mapper(pa.table({"ids": [[1]]}))


def test_readme_example(monkeypatch):
    """The docs' Ray Data example, as written (it starts and stops its own instance)."""
    from pathlib import Path
    import re

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "batch.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(root)
    if ray.is_initialized():
        ray.shutdown()
    ray_block = next(b for b in blocks if "import ray" in b)
    exec(compile(ray_block, "docs/batch.md", "exec"), {})
