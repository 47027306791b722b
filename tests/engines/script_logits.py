"""A vLLM V1 logits processor that makes the server emit an exact token sequence.

Loaded with ``--logits-processors script_logits:ScriptLogitsProcessor`` (this folder on
``PYTHONPATH``). A request that sends ``"vllm_xargs": {"script": [id, id, ...]}`` gets, at
output position ``n``, every logit set to ``-inf`` except ``script[n]``; past the end of the
script the request is left alone (scripts end with the model's stop token). Requests
without a script are untouched, so the same server also serves ordinary sampling.
"""
from __future__ import annotations

import torch
from vllm.v1.sample.logits_processor import AdapterLogitsProcessor


class _Forcer:
    __slots__ = ("script",)

    def __init__(self, script: list[int]) -> None:
        self.script = script

    def __call__(self, output_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        n = len(output_ids)
        if n < len(self.script):
            token = self.script[n]
            logits.fill_(float("-inf"))
            logits[token] = 0.0
        return logits


class ScriptLogitsProcessor(AdapterLogitsProcessor):
    def is_argmax_invariant(self) -> bool:
        return False  # it changes which token wins

    def new_req_logits_processor(self, params):
        script = (params.extra_args or {}).get("script")
        if not script:
            return None
        return _Forcer([int(t) for t in script])
