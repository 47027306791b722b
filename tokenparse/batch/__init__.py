"""Many complete responses at once: ``Model.parse_batch``, ``decode_rows`` and a worker pool.

The pipeline of one row, fastest first: :mod:`~tokenparse.batch.harmony` (gpt-oss rows by
message boundaries), :mod:`~tokenparse.batch.fast` (text-tag rows through the bulk decoder,
with :mod:`~tokenparse.batch.calls` reading whole tool blocks) and the general path in
:mod:`~tokenparse.batch.rows` (decoder -> router -> assembler, no per-step deltas).
:mod:`~tokenparse.batch.ids` makes the rows' call IDs.
"""
from .rows import RowResult, WorkerPool, decode_rows, default_workers, parse_batch, per_row, pooled_call_id, rows_from

__all__ = ["RowResult", "WorkerPool", "decode_rows", "default_workers", "parse_batch", "per_row", "pooled_call_id",
           "rows_from"]
