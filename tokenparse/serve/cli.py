"""``tokenparse serve``: the command line of the gateway.

:func:`add_serve_parser` only declares arguments (no server package is imported, so the
core install's CLI works without the ``[serve]`` extra); :func:`run_serve` checks the
model and starts uvicorn. With ``--workers N`` uvicorn starts N processes, each building
the app from the configuration passed in ``TOKENPARSE_SERVE_CONFIG`` (JSON) by
:func:`app_from_env`.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any

__all__ = ["add_serve_parser", "run_serve", "app_from_env", "ENGINES"]

ENGINES = ("vllm", "vllm-tokens", "sglang", "llamacpp")
_ENV = "TOKENPARSE_SERVE_CONFIG"


def add_serve_parser(sub: Any) -> argparse.ArgumentParser:
    s = sub.add_parser("serve", help="OpenAI Chat/Responses and Anthropic Messages gateway over an engine's token IDs "
                                     "(needs the [serve] extra)")
    s.add_argument("--engine", required=True, choices=ENGINES, help="the upstream engine's token-ID API")
    s.add_argument("--upstream", required=True, metavar="URL", help="the engine's base URL, e.g. http://127.0.0.1:8001")
    s.add_argument("--model", required=True, metavar="MODEL_DIR",
                   help="local Hugging Face model folder (config.json, tokenizer, chat template)")
    s.add_argument("--profile", default="auto", help="tokenparse profile, or auto (default: detected from the model)")
    s.add_argument("--served-model-name", metavar="NAME", help="model name clients see (default: the folder's name)")
    s.add_argument("--upstream-model", metavar="NAME", help="model name sent to the engine (default: none, the engine's own)")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--api-key", metavar="KEY", help="require this key (Authorization: Bearer KEY or x-api-key: KEY); "
                                                    "also read from TOKENPARSE_API_KEY")
    s.add_argument("--upstream-api-key", metavar="KEY", help="key sent to the engine as Authorization: Bearer KEY")
    s.add_argument("--workers", type=int, default=1, metavar="N", help="gateway processes (default: 1)")
    s.add_argument("--max-body-bytes", type=int, default=16 * 1024 * 1024, metavar="N",
                   help="largest request body accepted (413 past it; default 16 MiB)")
    s.add_argument("--max-concurrent-requests", type=int, default=1024, metavar="N",
                   help="requests served at once per process (429 past it; default 1024)")
    s.add_argument("--upstream-timeout", type=float, default=600.0, metavar="SECONDS",
                   help="longest wait for the engine to connect or send the next chunk (default 600)")
    s.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    s.add_argument("--access-log", action="store_true", help="log one line per request (method, path, status)")
    return s


def _config_dict(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "engine": args.engine, "upstream": args.upstream, "model": args.model,
        "profile": None if args.profile == "auto" else args.profile,
        "served_model_name": args.served_model_name, "upstream_model": args.upstream_model,
        "api_key": args.api_key or os.environ.get("TOKENPARSE_API_KEY") or None,
        "upstream_api_key": args.upstream_api_key,
        "max_body_bytes": args.max_body_bytes, "max_concurrent_requests": args.max_concurrent_requests,
        "upstream_timeout": args.upstream_timeout,
    }


def app_from_env() -> Any:
    """The app of one worker process, from ``TOKENPARSE_SERVE_CONFIG``."""
    from .app import GatewayConfig, create_app

    return create_app(GatewayConfig(**json.loads(os.environ[_ENV])))


def run_serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("tokenparse.serve")
    try:
        import uvicorn

        from .app import GatewayConfig, create_app
        from .model import StartupError, load_served_model
        from .upstreams import upstream_class
    except ImportError as exc:
        print(f"tokenparse serve: error: {exc.name or exc} is not installed; pip install 'tokenparse[serve]'", file=sys.stderr)
        return 2
    config = _config_dict(args)
    for key, low in (("workers", 1), ("port", 0), ("max_body_bytes", 1), ("max_concurrent_requests", 1)):
        if getattr(args, key) < low:
            print(f"tokenparse serve: error: --{key.replace('_', '-')} must be at least {low}", file=sys.stderr)
            return 2
    try:
        upstream_class(args.engine)
        served = load_served_model(args.model, profile=config["profile"], served_name=args.served_model_name)
    except (StartupError, ImportError, ValueError) as exc:
        print(f"tokenparse serve: error: {exc}", file=sys.stderr)
        return 2
    log.info("profile %s for %s; engine %s at %s; listening on %s:%d", served.profile, args.model, args.engine,
             args.upstream, args.host, args.port)
    if args.host not in ("127.0.0.1", "localhost", "::1") and not config["api_key"]:
        log.warning("listening on %s without --api-key: anyone who reaches this address can use the engine", args.host)
    options: dict[str, Any] = {"host": args.host, "port": args.port, "log_level": args.log_level,
                               "access_log": args.access_log, "timeout_graceful_shutdown": 5}
    try:
        import uvloop  # noqa: F401

        options["loop"] = "uvloop"
    except ImportError:
        pass
    try:
        import httptools  # noqa: F401

        options["http"] = "httptools"
    except ImportError:
        pass
    if args.workers > 1:
        os.environ[_ENV] = json.dumps(config)
        uvicorn.run("tokenparse.serve.cli:app_from_env", factory=True, workers=args.workers, **options)
    else:
        uvicorn.run(create_app(GatewayConfig(**config), served), **options)
    return 0
