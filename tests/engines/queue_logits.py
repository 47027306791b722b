"""A vLLM V1 logits processor that takes each new request's script from a queue folder.

For clients that cannot send ``vllm_xargs`` (Codex CLI, Claude Code, agent SDKs): the test
writes the scripts of the turns it expects, in order, as ``NNNN.json`` files (a JSON list of
token IDs) into the folder named by ``TOKENPARSE_SCRIPT_QUEUE``, and every new request the
engine sees takes the lowest-numbered one (the file is renamed to ``NNNN.json.used`` so the
test can count consumed turns). A request that sends ``vllm_xargs: {"script": [...]}`` uses
that script instead (as ``script_logits.ScriptLogitsProcessor``), and with the queue empty a
request is left alone (random weights: it rambles until ``max_tokens``, and the test fails on
its assertions, not by hanging).

Loaded with ``--logits-processors queue_logits:QueueScriptLogitsProcessor`` (this folder on
``PYTHONPATH``). It runs in the engine-core process, which inherits the environment.
Test tooling only.
"""
from __future__ import annotations

import os
from pathlib import Path

from script_logits import _Forcer
from script_queue import ENV, take_next
from vllm.v1.sample.logits_processor import AdapterLogitsProcessor


class QueueScriptLogitsProcessor(AdapterLogitsProcessor):
    def is_argmax_invariant(self) -> bool:
        return False  # it changes which token wins

    def new_req_logits_processor(self, params):
        script = (params.extra_args or {}).get("script")
        if not script:
            folder = os.environ.get(ENV)
            script = take_next(Path(folder)) if folder else None
        if not script:
            return None
        return _Forcer([int(t) for t in script])
