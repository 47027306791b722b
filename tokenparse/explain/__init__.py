"""``tokenparse explain``: what the parser made of each token of a completion.

:func:`trace` runs a real :class:`~tokenparse.api.Parser` over the IDs with a
:class:`TraceObserver` attached, feeding one ID at a time so that every event belongs to
the token that caused it (streaming output does not depend on how the IDs are cut: the
test suite checks that for every profile). Per token it records:

* the piece: a special token by its literal, ordinary bytes as text, bytes that are not a
  whole UTF-8 character on their own marked ``partial_utf8``;
* the decoder state the token was read in (``decoder.state``; see the decoder modules);
* the segment it belongs to (channel, recipient) from the decoder's own segment calls,
  which the observer sees by sitting between the decoder and the router;
* what the client got because of it: the parser's deltas for that token, by destination
  (``reasoning``, ``content``, ``tool`` arguments, ``builtin`` tool arguments);
* the diagnostics whose position is that token; the engine step it arrived in.

Nothing is decoded twice: the trace is the parser's events, so it shows what ``decode``
does, and :func:`trace` checks that against a parse of the engine steps as given. Without
an observer a parser pays nothing (one ``None`` check when it is built).

:func:`fold` groups runs of ordinary tokens in the same state, segment and destination
into one row; :func:`json_lines` writes rows as JSON lines in one form whether folded or
not (a folded row lists its tokens), and :func:`expand` undoes the folding on that form;
:func:`render` prints the table.

Modules: ``record`` (the observer and the parser run), ``rows`` (the data, folding, JSON),
``table`` (the table view; ``rich`` from the ``explain`` extra colours it on a terminal).
"""
from .record import TraceObserver, trace
from .rows import FORMAT_VERSION, EndTrace, Output, Row, TokenTrace, Trace, expand, fold, json_lines
from .table import render

__all__ = [
    "FORMAT_VERSION", "EndTrace", "Output", "Row", "TokenTrace", "Trace", "TraceObserver",
    "expand", "fold", "json_lines", "render", "trace",
]
