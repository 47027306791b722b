"""The served model: its profile, tokenparse model, prompt renderer and stop IDs, built once at start-up.

The profile is chosen as the vLLM plugin chooses it: ``config.json`` ``model_type ==
"gpt_oss"`` -> ``gpt-oss``; otherwise :func:`tokenparse.detection.resolve` on the folder's
tokenizer (added tokens) and chat template; no fit or several fits stop the start-up with
an error naming the candidates. ``--profile NAME`` forces one. Everything here is
immutable after start-up and shared by all requests.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tokenparse

from .conversation import Conversation
from .render_template import read_json

__all__ = ["ServedModel", "choose_profile", "load_served_model", "StartupError"]

logger = logging.getLogger("tokenparse.serve")
GPT_OSS = "gpt-oss"


class StartupError(Exception):
    """The gateway cannot serve this model as configured (the message says what to change)."""


@dataclass(frozen=True, slots=True)
class ServedModel:
    name: str  # what /v1/models lists and responses carry
    folder: Path
    profile: str
    model: tokenparse.Model
    renderer: Any  # HarmonyRenderer | TemplateRenderer: .render(conv) -> ids, .stop_token_ids

    @property
    def is_harmony(self) -> bool:
        return self.profile == GPT_OSS

    @property
    def stop_token_ids(self) -> list[int]:
        return list(self.renderer.stop_token_ids)

    def render(self, conv: Conversation) -> list[int]:
        return self.renderer.render(conv)


def choose_profile(folder: Path, forced: str | None) -> str:
    """The profile for the model in ``folder`` (``forced``: ``--profile``, ``None``/``auto``: detect)."""
    names = tokenparse.profile_names()
    model_type = read_json(folder / "config.json").get("model_type")
    if forced and forced != "auto":
        if forced not in names:
            raise StartupError(f"--profile {forced}: no such profile; one of: {', '.join(names)}")
        if model_type == "gpt_oss" and forced != GPT_OSS:
            raise StartupError(f"--profile {forced}: {folder} is a gpt_oss model (Harmony); use --profile gpt-oss or auto")
        return forced
    if model_type == "gpt_oss":
        return GPT_OSS
    from tokenparse.detection import DetectionError, resolve

    try:
        return resolve(str(folder), model_type=model_type)[0]
    except DetectionError as exc:
        listed = ", ".join(c.profile for c in exc.candidates) or ", ".join(names)
        raise StartupError(f"cannot tell the profile of {folder}: {exc}. Name it with --profile (one of: {listed})") from exc
    except tokenparse.TokenParseError as exc:
        raise StartupError(f"cannot read the tokenizer in {folder}: {exc}") from exc


def load_served_model(folder: str | Path, *, profile: str | None = None, served_name: str | None = None) -> ServedModel:
    path = Path(folder)
    if not path.is_dir():
        raise StartupError(f"--model {folder}: not a directory (a local Hugging Face model folder is expected)")
    chosen = choose_profile(path, profile)
    renderer: Any
    if chosen == GPT_OSS:
        from .render_harmony import HarmonyRenderer

        try:
            renderer = HarmonyRenderer()
        except RuntimeError as exc:
            raise StartupError(str(exc)) from exc
        model = tokenparse.load(GPT_OSS)
    else:
        from .render_template import TemplateRenderer

        try:
            renderer = TemplateRenderer(path)
        except RuntimeError as exc:
            raise StartupError(str(exc)) from exc
        try:
            model = tokenparse.load(chosen, tokenizer=renderer.tokenizer)
        except tokenparse.TokenParseError as exc:
            raise StartupError(f"profile {chosen} does not fit the tokenizer in {path}: {exc}") from exc
    name = served_name or path.name
    logger.info("serving %s as %r with profile %s (stop token ids %s)", path, name, chosen, renderer.stop_token_ids)
    return ServedModel(name, path, chosen, model, renderer)
