"""Many complete responses at once: ``Model.parse_batch`` and the row decoder behind it.

A batch row is one finished completion (RL rollouts, offline evaluations), so only the
complete message is needed: rows go through the fast path, which drives the layers
directly (decoder -> router -> assembler) and never builds per-step ``DeltaMessage``
objects. The result of a row is exactly ``model.parse`` of that row (a differential test
checks it for every profile).

Row inputs: a list of ID sequences (lists, tuples, NumPy arrays), a 2-D NumPy array, or a
pyarrow ``list<int>`` array / chunked array (a table column). The flat values of an Arrow
column are converted to Python ints in one C-level call and sliced per row.

Errors: a row that fails (strict mode, or input that is not token IDs) does not stop the
others. ``decode_rows`` returns a :class:`RowResult` per row with ``error`` set;
``Model.parse_batch`` puts the exception object itself in that row's slot of the result
list (``isinstance(item, Exception)``), with ``error.row`` set to the row's index.

Process pool: ``workers=N`` splits the rows into chunks and decodes them in N processes;
each process receives the model once (its initializer) and keeps it for every chunk.
"""
from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal

from ..assembly import Assembler
from ..core import DiagnosticLog
from ..errors import Diagnostic, TokenParseError
from ..messages import ChatMessage
from ..messages.fast import chat_message, tool_calls
from ..token_ids import int_ids, is_plain_step, plain_id_list, prompt_id_list
from ..toolset import ToolSet
from .fast import fast_plan, fast_row
from .harmony import harmony_rows
from .ids import pooled_call_id

__all__ = ["RowResult", "WorkerPool", "decode_rows", "parse_batch", "rows_from", "per_row", "pooled_call_id"]

#: errors a row may raise without stopping the batch: protocol errors in strict mode, and
#: input that is not token IDs (a string, floats, a null Arrow row)
ROW_ERRORS = (TokenParseError, TypeError, ValueError, OverflowError)


@dataclass(slots=True)
class RowResult:
    """What one row decoded to: the message, or the error that stopped it (never both)."""

    message: ChatMessage | None
    error: Exception | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


# -- inputs ------------------------------------------------------------------------------------


def rows_from(rows: Any) -> list[Any]:
    """The rows as a list of ID lists (or, for a row that is not IDs, the value as given).

    A ``str``/``bytes``/``dict`` is refused with a ``TypeError`` (iterating it would make a row
    of each character or key)."""
    if isinstance(rows, (str, bytes, bytearray, dict)):
        raise TypeError(f"rows must be a sequence of token-ID sequences (one per response), got {type(rows).__name__}; "
                        "to parse one response use model.parse(token_ids)")
    arrow = _arrow_rows(rows)
    if arrow is not None:
        return arrow
    tolist = getattr(rows, "tolist", None)
    if tolist is not None and getattr(rows, "ndim", 1) == 2:  # a 2-D NumPy array
        return tolist()
    return [_row_ids(row) for row in rows]


def _row_ids(row: Any) -> Any:
    if type(row) is list:
        if row and type(row[0]) is not int:
            return [t.__index__() if hasattr(t, "__index__") and not isinstance(t, (bool, float)) else t for t in row]
        return row
    tolist = getattr(row, "tolist", None)  # NumPy / torch arrays, Arrow scalars' values
    if tolist is not None:
        return tolist()
    if isinstance(row, (str, bytes, int)) or row is None:
        return row  # reported for this row when it is decoded
    if hasattr(row, "as_py"):  # an Arrow ListScalar
        return row.as_py()
    return list(row)


def _arrow_rows(rows: Any) -> list[Any] | None:
    module = type(rows).__module__
    if not module.startswith("pyarrow"):
        return None
    chunks = rows.chunks if hasattr(rows, "chunks") else [rows]
    out: list[Any] = []
    for chunk in chunks:
        if not hasattr(chunk, "offsets"):
            raise TypeError(f"expected an Arrow list array of token IDs, got {chunk.type}")
        if chunk.null_count:
            out.extend(None if v is None else v for v in chunk.to_pylist())
            continue
        # one conversion of the flat values, then a list slice per row (the array's own
        # offsets; a sliced array's offsets are absolute into its values)
        offsets = chunk.offsets.to_pylist()
        values = chunk.values
        base = offsets[0] if offsets else 0
        flat = values.slice(base, offsets[-1] - base).to_pylist() if offsets else []
        out.extend(flat[offsets[i] - base : offsets[i + 1] - base] for i in range(len(offsets) - 1))
    return out


def per_row(value: Any, count: int, what: str) -> list[Any] | None:
    """A per-row column (``prompts``, per-row ``tools``) as a list of ``count`` items."""
    if value is None:
        return None
    if type(value).__module__.startswith("pyarrow"):
        value = value.to_pylist()
    value = list(value)
    if len(value) != count:
        raise ValueError(f"{what}: {len(value)} entries for {count} rows")
    return value


def _is_per_row_tools(tools: Any) -> bool:
    """``tools`` is per row when its items are tool lists (or ``None``), not tools (dicts)."""
    if tools is None or isinstance(tools, (str, bytes, dict)):
        return False
    if type(tools).__module__.startswith("pyarrow"):
        return True
    items = list(tools)
    return bool(items) and all(item is None or isinstance(item, (list, tuple)) for item in items)


# -- decoding ----------------------------------------------------------------------------------


def decode_rows(
    model: Any,
    rows: Any,
    tools: Any = None,
    prompts: Any = None,
    *,
    tool_choice: Any = "auto",
    strict: bool = False,
    finish_reason: Literal["stop", "length"] = "stop",
    workers: int | None = None,
    id_factory: Any = pooled_call_id,
) -> list[RowResult]:
    """One :class:`RowResult` per row, in input order (see the module docstring)."""
    ids = rows_from(rows)
    prompt_rows = per_row(prompts, len(ids), "prompts")
    tool_rows = per_row(tools, len(ids), "tools") if _is_per_row_tools(tools) else None
    shared_tools = None if tool_rows is not None else tools
    if workers is not None and workers > 1 and len(ids) > 1:
        return _decode_in_pool(model, ids, shared_tools, tool_rows, prompt_rows, workers,
                               (tool_choice, strict, finish_reason, id_factory))
    with _collector_paused():
        return list(_decode_chunk(model, ids, shared_tools, tool_rows, prompt_rows,
                                  tool_choice, strict, finish_reason, id_factory, 0))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while a batch builds its results: every row adds objects
    that stay alive (the messages), so the collections a batch triggers find nothing to
    free, and each full one walks the model's tables again. Row objects hold no cycles.
    Afterwards the new objects go straight to the oldest generation (``freeze`` then
    ``unfreeze``: two list splices), where a collection walks them only when the heap has
    grown by a quarter, instead of all at once at the next allocation; skipped when the
    caller keeps objects frozen (``gc.freeze`` before a fork)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _decode_chunk(
    model: Any,
    ids: list[Any],
    shared_tools: Any,
    tool_rows: list[Any] | None,
    prompt_rows: list[Any] | None,
    tool_choice: Any,
    strict: bool,
    finish_reason: str,
    id_factory: Any,
    first_row: int,
) -> Iterator[RowResult]:
    dialect = model.dialect
    make_decoder, make_router = dialect.decoder, dialect.router
    # A ToolSet is immutable once built: one per distinct tools list, not one per row.
    toolsets: dict[int, tuple[Any, ToolSet]] = {}

    def toolset_for(value: Any) -> ToolSet:
        entry = toolsets.get(id(value))
        if entry is None:
            entry = toolsets[id(value)] = (value, ToolSet(value, tool_choice))
        return entry[1]

    shared = toolset_for(shared_tools) if tool_rows is None else None
    plan = fast_plan(dialect)  # tag rows of the plain shape skip the per-row parser objects
    harmony = harmony_rows(dialect)  # gpt-oss rows of the plain shape
    for i, row in enumerate(ids):
        if plan is not None or (harmony is not None and type(row) is list):
            prompt = prompt_rows[i] if prompt_rows is not None else None
            if prompt is None or (type(prompt) is list and is_plain_step(prompt)):  # (else: the row error)
                toolset = shared if shared is not None else toolset_for(tool_rows[i])  # type: ignore[index]
                if plan is not None:
                    fast = fast_row(plan, row, toolset, prompt, finish_reason, id_factory, strict)
                else:
                    fast = harmony.message(row, toolset, finish_reason, id_factory, prompt)  # type: ignore[union-attr]
                if fast is not None:
                    yield RowResult(fast, None, [])
                    continue
        log = DiagnosticLog(strict)
        try:
            row = plain_id_list(row if type(row) is list else _checked_row(row))  # a bool is an invalid ID, as in parse
            toolset = shared if shared is not None else toolset_for(tool_rows[i])  # type: ignore[index]
            prompt = prompt_rows[i] if prompt_rows is not None else None
            # a column's cell (Arrow, NumPy) as a list here; every check is prompt_id_list's,
            # as in Model.parse: an item that is no token ID is this row's error
            prompt = prompt_id_list(_row_ids(prompt) if prompt is not None else None)
            assembler = Assembler(toolset, log, id_factory=id_factory)
            decoder = make_decoder(make_router(assembler, log, toolset), log, prompt)
            decoder.feed(row)
            decoder.finish()
            assembler.finish()
            # what the per-step path counts in take(): every integer fed
            assembler.consumed_tokens = len(row) if not log.items else len(int_ids(row))
            message = assembler.message(finish_reason)
        except ROW_ERRORS as error:
            try:
                setattr(error, "row", first_row + i)  # noqa: B010 - an attribute the error classes lack
            except AttributeError:  # pragma: no cover - exceptions with __slots__
                pass
            yield RowResult(None, error, log.diagnostics())
            continue
        yield RowResult(message, None, log.diagnostics())


def _checked_row(row: Any) -> list[Any]:
    if row is None:
        raise TypeError("row has no token IDs (null)")
    converted = _row_ids(row)
    if not isinstance(converted, list):
        raise TypeError(f"token IDs must be a sequence of ints, got {type(row).__name__}")
    return converted


# -- process pool ------------------------------------------------------------------------------

_worker_model: Any = None


def _init_worker(model: Any) -> None:
    global _worker_model
    _worker_model = model


def _worker_chunk(args: tuple) -> list[tuple]:
    ids, shared_tools, tool_rows, prompt_rows, options, first_row = args
    tool_choice, strict, finish_reason, id_factory = options
    with _collector_paused():
        return [_pack(r) for r in _decode_chunk(_worker_model, ids, shared_tools, tool_rows, prompt_rows,
                                                tool_choice, strict, finish_reason, id_factory, first_row)]


# Results cross the process boundary as plain tuples: pickling pydantic models costs more
# than decoding a short row. The parent rebuilds the same messages without a validation
# pass (the values were valid when the worker built them; :mod:`.messages.fast`).


def _pack(result: RowResult) -> tuple:
    diagnostics = [(d.code, d.message, d.position, d.text) for d in result.diagnostics]
    m = result.message
    if m is None:
        return (None, result.error, diagnostics)
    return ((m.content, m.reasoning, [(c.id, c.function.name, c.function.arguments) for c in m.tool_calls],
             [(c.id, c.function.name, c.function.arguments) for c in m.builtin_tool_calls],
             m.finish_reason, m.reasoning_tokens, m.completion_tokens), None, diagnostics)


def _unpack(packed: tuple) -> RowResult:
    fields, error, diagnostics = packed
    found = [Diagnostic(*d) for d in diagnostics] if diagnostics else []
    if fields is None:
        return RowResult(None, error, found)
    content, reasoning, calls, builtin, finish_reason, reasoning_tokens, completion_tokens = fields
    message = chat_message(content, reasoning, tool_calls(calls) if calls else [], tool_calls(builtin) if builtin else [],
                           finish_reason, reasoning_tokens, completion_tokens)
    return RowResult(message, None, found)


def _decode_in_pool(
    model: Any, ids: list[Any], shared_tools: Any, tool_rows: Any, prompt_rows: Any, workers: int, options: tuple
) -> list[RowResult]:
    with WorkerPool(model, workers) as pool:
        return pool._run(ids, shared_tools, tool_rows, prompt_rows, options)


class WorkerPool:
    """N processes that each hold the model, for decoding many batches (``with`` closes it).

    ``pool.decode_rows(rows, tools, prompts, **options)`` takes the arguments of
    :func:`decode_rows` (except ``workers``) and returns the same results.
    """

    def __init__(self, model: Any, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork shares the loaded tables with the workers for free; elsewhere the model is
        # pickled once per worker (its optional text encoder, used by tests only, is left out)
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        payload = model if method == "fork" else _portable(model)
        self.workers = workers
        self._executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                                             initializer=_init_worker, initargs=(payload,))

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def decode_rows(
        self,
        rows: Any,
        tools: Any = None,
        prompts: Any = None,
        *,
        tool_choice: Any = "auto",
        strict: bool = False,
        finish_reason: Literal["stop", "length"] = "stop",
        id_factory: Any = pooled_call_id,
    ) -> list[RowResult]:
        ids = rows_from(rows)
        prompt_rows = per_row(prompts, len(ids), "prompts")
        tool_rows = per_row(tools, len(ids), "tools") if _is_per_row_tools(tools) else None
        shared_tools = None if tool_rows is not None else tools
        return self._run(ids, shared_tools, tool_rows, prompt_rows, (tool_choice, strict, finish_reason, id_factory))

    def _run(self, ids: list[Any], shared_tools: Any, tool_rows: Any, prompt_rows: Any, options: tuple) -> list[RowResult]:
        # a few chunks per worker: balances rows of very different lengths, keeps pickling cheap
        size = max(1, -(-len(ids) // (self.workers * 4)))
        tasks = []
        for start in range(0, len(ids), size):
            stop = start + size
            tasks.append((
                ids[start:stop],
                shared_tools,
                tool_rows[start:stop] if tool_rows is not None else None,
                prompt_rows[start:stop] if prompt_rows is not None else None,
                options,
                start,
            ))
        out: list[RowResult] = []
        for part in self._executor.map(_worker_chunk, tasks):
            out.extend(map(_unpack, part))
        return out


def _portable(model: Any) -> Any:
    import copy

    table = copy.copy(model.table)
    table._encoder = None
    return type(model)(model.name, table, model.dialect)


# -- the public entry point --------------------------------------------------------------------


def parse_batch(
    model: Any,
    rows: Any,
    tools: Any = None,
    prompts: Any = None,
    *,
    tool_choice: Any = "auto",
    strict: bool = False,
    finish_reason: Literal["stop", "length"] = "stop",
    workers: int | None = None,
) -> list[Any]:
    """``model.parse`` of every row; a failed row's slot holds its exception (``.row`` set)."""
    results = decode_rows(model, rows, tools, prompts, tool_choice=tool_choice, strict=strict,
                          finish_reason=finish_reason, workers=workers)
    return [r.message if r.error is None else r.error for r in results]


def default_workers() -> int:
    """CPUs this process may use (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1
