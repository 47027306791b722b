"""The one error an upstream raises (re-exported by :mod:`.base`)."""
from __future__ import annotations

__all__ = ["UpstreamError"]


class UpstreamError(Exception):
    """The engine could not be reached, answered an error, sent something unreadable, or timed out."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
