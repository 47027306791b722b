"""``tokenparse decode --batch IN --out OUT``: many complete responses, file to file.

Input rows (JSON lines, or Parquet with ``pyarrow`` installed: ``pip install pyarrow``):

* ``token_ids``: the completion's IDs (a JSON line may also be a bare array);
* ``prompt_token_ids`` (optional): the prompt's IDs, which set the start state;
* ``tools`` (optional): the request's tools list, as a list or a JSON string; otherwise
  ``--tools FILE`` applies to every row.

Every other field of a row (an ``id``, a ``uid``...) is copied to its output row. Output
rows, in input order: ``content``, ``reasoning``, ``tool_calls`` (``id``, ``type``,
``function`` ``{name, arguments}``), ``finish_reason``, ``reasoning_tokens``,
``completion_tokens``, ``diagnostics`` (how many problems were recovered from) and ``error``
(``null``, or the message of the error that stopped the row in ``--strict`` mode). The
format of each side follows its file extension (``.parquet`` / ``.pq``, anything else is
JSON lines; ``-`` is stdin / stdout). A progress line is drawn on stderr when it is a
terminal.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from array import array
from typing import Any, Iterator, TextIO

from ..batch import RowResult, WorkerPool, decode_rows, default_workers

__all__ = ["add_batch_arguments", "run_batch", "message_row"]

#: input fields the decoder consumes (the rest is copied through)
_CONSUMED = ("token_ids", "prompt_token_ids", "tools")
_CHUNK_ROWS = 2048


def add_batch_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("batch mode (one complete response per row)")
    group.add_argument("--batch", metavar="IN", help="JSON lines or Parquet file with a token_ids column")
    group.add_argument("--out", metavar="OUT", help="output file for --batch (.parquet/.pq or JSON lines; - for stdout)")
    group.add_argument("--workers", type=int, default=1, metavar="N",
                       help="decode --batch in N processes (0: one per CPU; default 1)")


class BatchInputError(ValueError):
    """A batch input row or file is not in an accepted shape."""


def _is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


def _need_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise BatchInputError("Parquet needs pyarrow: pip install pyarrow") from None
    return pq


# -- reading -----------------------------------------------------------------------------------


def _jsonl_chunks(source: TextIO, lines: array | None = None) -> Iterator[list[dict[str, Any]]]:
    """Chunks of rows; ``lines`` gets each row's line number (blank lines are skipped)."""
    chunk: list[dict[str, Any]] = []
    for number, line in enumerate(source, 1):
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise BatchInputError(f"line {number}: not JSON ({error.msg})") from None
        if isinstance(value, list):
            value = {"token_ids": value}
        if not isinstance(value, dict) or "token_ids" not in value:
            raise BatchInputError(f"line {number}: expected an object with a token_ids field (or an array of IDs)")
        chunk.append(value)
        if lines is not None:
            lines.append(number)
        if len(chunk) >= _CHUNK_ROWS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _parquet_chunks(path: str) -> tuple[int, Iterator[Any]]:
    pq = _need_pyarrow()
    reader = pq.ParquetFile(path)
    if "token_ids" not in reader.schema_arrow.names:
        raise BatchInputError(f"{path}: no token_ids column (columns: {', '.join(reader.schema_arrow.names)})")
    return reader.metadata.num_rows, reader.iter_batches(batch_size=_CHUNK_ROWS)


def _tools_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise BatchInputError(f"{where}: tools is not JSON ({error.msg})") from None
        if isinstance(value, dict) and "tools" in value:
            value = value["tools"]
        if isinstance(value, list) or value is None:
            return value
    raise BatchInputError(f"{where}: tools must be a list of tools (or its JSON text)")


# -- writing -----------------------------------------------------------------------------------


def message_row(result: RowResult) -> dict[str, Any]:
    """The output columns of one row."""
    message = result.message
    if message is None:
        return {"content": None, "reasoning": None, "tool_calls": [], "finish_reason": None, "reasoning_tokens": 0,
                "completion_tokens": 0, "diagnostics": len(result.diagnostics), "error": str(result.error)}
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [{"id": c.id, "type": c.type, "function": {"name": c.function.name, "arguments": c.function.arguments}}
                       for c in message.tool_calls],
        "finish_reason": message.finish_reason,
        "reasoning_tokens": message.reasoning_tokens,
        "completion_tokens": message.completion_tokens,
        "diagnostics": len(result.diagnostics),
        "error": None,
    }


def output_schema(passthrough: Any = None) -> Any:
    import pyarrow as pa

    call = pa.struct([("id", pa.string()), ("type", pa.string()),
                      ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())]))])
    fields = list(passthrough or []) + [
        ("content", pa.string()), ("reasoning", pa.string()), ("tool_calls", pa.list_(call)),
        ("finish_reason", pa.string()), ("reasoning_tokens", pa.int64()), ("completion_tokens", pa.int64()),
        ("diagnostics", pa.int64()), ("error", pa.string()),
    ]
    return pa.schema(fields)


class _Progress:
    def __init__(self, total: int | None, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.enabled = stream.isatty()
        self.done = 0
        self.start = time.monotonic()

    def add(self, count: int) -> None:
        self.done += count
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.start, 1e-9)
        if self.total:
            width = 30
            filled = int(width * self.done / self.total)
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r[{bar}] {self.done}/{self.total} rows, {self.done / elapsed:,.0f} rows/s"
        else:
            text = f"\r{self.done} rows, {self.done / elapsed:,.0f} rows/s"
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# -- the command -------------------------------------------------------------------------------


def run_batch(args: argparse.Namespace, out: TextIO) -> int:
    import tokenparse

    if not args.out:
        raise BatchInputError("--batch needs --out OUT (a .parquet/.pq file, JSON lines, or - for stdout)")
    shared_tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            shared_tools = _tools_value(f.read(), args.tools)
    model = tokenparse.load(args.model, tokenizer=args.tokenizer)
    workers = default_workers() if args.workers == 0 else args.workers
    if workers < 0:
        raise BatchInputError(f"--workers must be 0 or more, got {args.workers}")
    options = {"strict": args.strict, "finish_reason": args.finish_reason}
    pool = WorkerPool(model, workers) if workers > 1 else None

    def decode(rows: list, tools: Any, prompts: Any) -> list[RowResult]:
        if pool is not None:
            return pool.decode_rows(rows, tools, prompts, **options)
        return decode_rows(model, rows, tools, prompts, **options)

    where = "<stdin>" if args.batch == "-" else args.batch
    try:
        if _is_parquet(args.batch):
            rows_total, chunks = _parquet_chunks(args.batch)
            written = _from_parquet(chunks, rows_total, args.out, out, shared_tools, decode)
        else:
            source = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
            with source:
                total = None if source is sys.stdin else _count_lines(args.batch)
                lines = array("q")
                written = _from_jsonl(_jsonl_chunks(source, lines), lines, total, args.out, out, shared_tools, decode)
    except BatchInputError as error:  # say which file (the message names the line or row)
        if str(error).startswith(where + ":"):
            raise
        raise BatchInputError(f"{where}: {error}") from None
    except UnicodeDecodeError as error:
        raise BatchInputError(f"{where}: not UTF-8 text (byte {error.start})") from None
    finally:
        if pool is not None:
            pool.close()
    if sys.stderr.isatty():
        print(f"tokenparse: decoded {written} rows", file=sys.stderr)
    return 0


def _count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def _row_tools(rows: list[dict[str, Any]], shared: Any, first: int, lines: array) -> Any:
    if not any("tools" in row for row in rows):
        return shared
    return [_tools_value(row["tools"], f"line {lines[first + i]}") if "tools" in row else shared
            for i, row in enumerate(rows)]


class _Sink:
    """Writes output rows as JSON lines or Parquet (one row group per input chunk)."""

    def __init__(self, path: str, out: TextIO) -> None:
        self.path = path
        self.parquet = _is_parquet(path)
        self._writer: Any = None
        self._file: TextIO | None = None
        if not self.parquet:
            self._file = out if path == "-" else open(path, "w", encoding="utf-8")

    def write(self, rows: list[dict[str, Any]], passthrough: Any = None) -> None:
        if self.parquet:
            import pyarrow as pa

            pq = _need_pyarrow()
            if self._writer is not None:  # every row group has the first one's columns
                schema = self._writer.schema
            else:
                if passthrough is None:  # JSON lines: the copied fields' types from their values
                    own = set(output_schema().names)
                    extra = [k for k in dict.fromkeys(k for row in rows for k in row) if k not in own]
                    passthrough = list(pa.Table.from_pylist([{k: row.get(k) for k in extra} for row in rows]).schema)
                schema = output_schema(passthrough)
            table = pa.Table.from_pylist(rows, schema=schema)
            if self._writer is None:
                self._writer = pq.ParquetWriter(self.path, table.schema)
            self._writer.write_table(table)
            return
        assert self._file is not None
        self._file.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))

    def close(self, empty_schema: Any = None) -> None:
        if self.parquet:
            if self._writer is None:  # no rows: still write a file with the columns
                import pyarrow as pa

                pq = _need_pyarrow()
                pq.write_table(pa.Table.from_pylist([], schema=output_schema(empty_schema)), self.path)
            else:
                self._writer.close()
        elif self._file is not None and self.path != "-":
            self._file.close()
        elif self._file is not None:
            self._file.flush()


def _from_jsonl(chunks: Iterator[list[dict[str, Any]]], lines: array, total: int | None, path: str, out: TextIO,
                shared_tools: Any, decode: Any) -> int:
    sink, progress, written = _Sink(path, out), _Progress(total, sys.stderr), 0
    try:
        for rows in chunks:
            ids = [row["token_ids"] for row in rows]
            prompts = [row.get("prompt_token_ids") for row in rows] if any("prompt_token_ids" in r for r in rows) else None
            results = decode(ids, _row_tools(rows, shared_tools, written, lines), prompts)
            output = []
            for row, result in zip(rows, results):
                record = {k: v for k, v in row.items() if k not in _CONSUMED}
                record.update(message_row(result))
                output.append(record)
            sink.write(output)
            written += len(rows)
            progress.add(len(rows))
    finally:
        progress.close()
        sink.close()
    return written


def _from_parquet(chunks: Iterator[Any], total: int, path: str, out: TextIO, shared_tools: Any, decode: Any) -> int:
    sink, progress, written = _Sink(path, out), _Progress(total, sys.stderr), 0
    passthrough_fields: Any = None
    try:
        for batch in chunks:
            names = batch.schema.names
            prompts = batch.column("prompt_token_ids") if "prompt_token_ids" in names else None
            tools: Any = shared_tools
            if "tools" in names:
                tools = [_tools_value(v, f"row {written + i}") if v is not None else shared_tools
                         for i, v in enumerate(batch.column("tools").to_pylist())]
            results = decode(batch.column("token_ids"), tools, prompts)
            keep = [n for n in names if n not in _CONSUMED]
            passthrough_fields = [batch.schema.field(n) for n in keep]
            kept = {n: batch.column(n).to_pylist() for n in keep}
            output = []
            for i, result in enumerate(results):
                record = {n: kept[n][i] for n in keep}
                record.update(message_row(result))
                output.append(record)
            sink.write(output, passthrough_fields if sink.parquet else None)
            written += len(results)
            progress.add(len(results))
    finally:
        progress.close()
        sink.close(passthrough_fields)
    return written
