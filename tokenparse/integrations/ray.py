"""Ray Data: decode a dataset's ``token_ids`` column into message columns.

``TokenParseBatch`` is a callable class for ``Dataset.map_batches``: Ray builds one per
actor, so the model (token tables, resolved tags) is loaded once per actor and reused for
every batch the actor receives::

    import ray
    from tokenparse.integrations.ray import TokenParseBatch

    ds = ray.data.read_parquet("rollouts.parquet")          # a token_ids list column
    ds = ds.map_batches(TokenParseBatch, fn_constructor_kwargs={"profile": "gpt-oss"},
                        concurrency=4, batch_format="pyarrow")
    ds.write_parquet("messages/")

Each output batch has the input columns followed by ``content``, ``reasoning``,
``tool_calls`` (list of ``{id, type, function: {name, arguments}}``), ``finish_reason``,
``reasoning_tokens``, ``completion_tokens``, ``diagnostics`` (count) and ``error`` (the
message of the error that stopped the row in strict mode, else null). Optional columns:
``prompt_token_ids`` (start state) and ``tools`` (per-row tools list or its JSON text).
Only this module imports ``pyarrow``; it does not import ``ray`` at all (Ray imports it).
"""
from __future__ import annotations

from typing import Any

from ..batch import decode_rows
from ..cli.batch import _tools_value, message_row, output_schema

__all__ = ["TokenParseBatch"]


class TokenParseBatch:
    """``map_batches`` callable: a batch (Arrow table, dict of NumPy arrays, or pandas) ->
    an Arrow table with the message columns added."""

    def __init__(
        self,
        profile: str = "gpt-oss",
        tokenizer: Any = None,
        *,
        tools: Any = None,
        strict: bool = False,
        finish_reason: str = "stop",
        column: str = "token_ids",
        prompt_column: str = "prompt_token_ids",
        tools_column: str = "tools",
        keep_columns: bool = True,
        **load_options: Any,
    ) -> None:
        import tokenparse

        self.model = tokenparse.load(profile, tokenizer=tokenizer, **load_options)
        self.tools = tools
        self.strict = strict
        self.finish_reason = finish_reason
        self.column = column
        self.prompt_column = prompt_column
        self.tools_column = tools_column
        self.keep_columns = keep_columns

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        table = _as_table(batch)
        names = table.column_names
        if self.column not in names:
            raise KeyError(f"batch has no {self.column!r} column (columns: {', '.join(names)})")
        prompts = table.column(self.prompt_column) if self.prompt_column in names else None
        tools = self.tools
        if self.tools_column in names:
            tools = [_tools_value(v, f"row {i}") if v is not None else self.tools
                     for i, v in enumerate(table.column(self.tools_column).to_pylist())]
        results = decode_rows(self.model, table.column(self.column), tools, prompts,
                              strict=self.strict, finish_reason=self.finish_reason)  # type: ignore[arg-type]
        messages = pa.Table.from_pylist([message_row(r) for r in results], schema=output_schema())
        if not self.keep_columns:
            return messages
        for name in messages.column_names:
            if name in names:
                table = table.drop_columns([name])
            table = table.append_column(name, messages.column(name))
        return table


def _as_table(batch: Any) -> Any:
    import pyarrow as pa

    if isinstance(batch, pa.Table):
        return batch
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas.DataFrame
        batch = {name: batch[name].tolist() for name in batch.columns}
    if isinstance(batch, dict):
        columns = {}
        for name, values in batch.items():
            values = list(values) if not isinstance(values, list) else values
            columns[name] = pa.array([v.tolist() if hasattr(v, "tolist") else v for v in values])
        return pa.table(columns)
    raise TypeError(f"expected an Arrow table, a dict of columns or a pandas DataFrame, got {type(batch).__name__}")
