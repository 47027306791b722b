"""How much a test run does: the default run or the full run (one owner for both sizes).

* **Default run** (``pytest``): what a contributor runs, a few minutes on two cores, no
  engines. Every area is exercised, with smaller samples.
* **Full run** (``pytest --full``, or ``TOKENPARSE_FULL_TESTS=1``; CI runs it through
  ``.ci/run``): the engines, every test marked ``slow``, every property test with its own
  example count and every sweep whole.

What the default run makes smaller (``conftest.py`` applies it; nothing is skipped silently,
the deselected items are reported as deselected):

* ``@pytest.mark.slow``: the whole test runs in the full run only. A module must keep at
  least one test in the default run (conftest refuses a module that is all slow).
* ``@pytest.mark.sweep("param", keep=(...), extra=1)``: of a parametrized test's values of
  ``param``, the default run keeps the ``keep`` values (without ``keep``: the first and the
  last) plus ``extra`` others, chosen by a hash of the other parameters, so that across the
  other parameters every value is still run; the full run runs all of them. As a module's
  ``pytestmark`` it sweeps the module's tests that have the parameter.
* two-way splits of a response (:func:`split_points`): every boundary in the full run, a
  spread of them in the default run.
* hypothesis: two settings profiles, ``tokenparse-default`` and ``tokenparse-full`` (loaded
  before any test module is imported, so decorators inherit them). The default run cuts each
  property test's ``max_examples`` to :func:`default_examples` of it; the full run keeps the
  number the test asks for.

The default run is also spread over the machine's cores with pytest-xdist when it is
installed (the ``test`` extra has it) and the run was asked for whole: :func:`parallel_workers`
decides, ``conftest.py`` applies it. The full run stays serial: its module fixtures start
engine servers, one at a time on a shared machine.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

from hypothesis import settings

#: examples of a property test with no count of its own (the full run: hypothesis' default)
FULL_EXAMPLES = 100
#: a property test's count in the default run is its own divided by this, never under FLOOR
DIVISOR = 10
FLOOR = 10

FULL_ENV = "TOKENPARSE_FULL_TESTS"

#: whether this run is the full run (conftest sets it before any test module is imported)
FULL = False

#: the most workers the default run starts by itself (each collects the whole suite and builds its
#: own session fixtures: more than this gains little)
MAX_WORKERS = 4
#: memory a worker may reach (its own tokenizers, the memory-bound checks): measured peak RSS
#: ~4.2 GB with 2 workers, 5.3 GB in a serial run; the default run starts no more workers than fit
WORKER_MEMORY = 4 << 30

#: the default run cuts a response at most this many ways (:func:`split_points`)
DEFAULT_SPLITS = 16


def full_requested(config: Any) -> bool:
    return bool(config.getoption("--full")) or os.environ.get(FULL_ENV) == "1"


def parallel_workers(config: Any, tests: Path, cores: int, memory: int | None = None) -> int:
    """How many xdist workers the default run starts by itself (0: serial as asked).

    Parallel only when nothing says otherwise: not the full run, xdist loaded (not
    ``-p no:xdist``), no xdist option of the user's own (``-n``, ``--dist``, ``--tx``,
    ``-d``), not an xdist worker, no ``--pdb``, not ``--collect-only``, a session of this
    repository's ``tests`` (not a pytester session inside a test), and no test file or
    node ID named (a run of a few files starts faster serially); at least two cores and,
    when ``memory`` (bytes) is known, ``WORKER_MEMORY`` for each worker.
    ``-n auto`` or ``-n 0`` chooses explicitly."""
    option = config.option
    if full_requested(config) or not config.pluginmanager.has_plugin("xdist"):
        return 0
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return 0
    if option.numprocesses is not None or option.dist != "no" or option.tx or option.distload:
        return 0
    if option.usepdb or option.collectonly or Path(config.rootpath) != tests.parent:
        return 0
    here = Path(config.invocation_params.dir)
    if any(not (here / str(arg).split("::")[0]).is_dir() for arg in config.args):
        return 0
    workers = min(cores, MAX_WORKERS, memory // WORKER_MEMORY if memory else MAX_WORKERS)
    return workers if workers >= 2 else 0


def machine() -> tuple[int, int | None]:
    """The cores this process may use, and the machine's memory in bytes (None: unknown)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows
        memory = None
    return cores, memory


def default_examples(own: int) -> int:
    """A property test's example count in the default run, from the count it asks for."""
    return own if own <= FLOOR else max(FLOOR, own // DIVISOR)


def split_points(n: int) -> range | list[int]:
    """Where a test splits ``n`` IDs in two: every boundary in the full run; in the default
    run every boundary of a short response, else ``DEFAULT_SPLITS`` spread over it (the
    first and last boundaries included: tags sit at the ends)."""
    if FULL or n - 1 <= DEFAULT_SPLITS:
        return range(1, n)
    step = (n - 1) / (DEFAULT_SPLITS - 1)
    return sorted({1 + round(i * step) for i in range(DEFAULT_SPLITS - 1)} | {n - 1})


def register_profiles() -> None:
    """Both profiles inherit the active one (hypothesis' ``ci`` profile when ``CI`` is set:
    derandomized, no database). No deadline: the machines are shared, a deadline is noise."""
    base = settings.default
    settings.register_profile("tokenparse-full", base, max_examples=FULL_EXAMPLES, deadline=None)
    settings.register_profile("tokenparse-default", base, max_examples=default_examples(FULL_EXAMPLES), deadline=None)


def cap_examples(test: Any) -> bool:
    """Cut a collected hypothesis test's own ``max_examples`` for the default run (once per
    function: parametrized items share it). False when ``test`` is no hypothesis test."""
    function = getattr(test, "__func__", test)
    if not getattr(function, "is_hypothesis_test", False):
        return False
    if getattr(function, "_tokenparse_own_examples", None) is not None:
        return True
    own = getattr(function, "_hypothesis_internal_use_settings", None)
    if own is None:  # hypothesis changed where @given keeps a test's settings: fail loudly
        raise RuntimeError(f"{function.__qualname__}: no hypothesis settings found to cut for the default run")
    function._tokenparse_own_examples = own.max_examples
    function._hypothesis_internal_use_settings = settings(own, max_examples=default_examples(own.max_examples))
    return True


def sweep_deselected(items: list[Any]) -> set[int]:
    """Indexes of the items the ``sweep`` markers leave to the full run."""
    groups: dict[tuple, list[str]] = {}
    seen: list[tuple[int, Any, tuple, str]] = []
    for index, item in enumerate(items):
        callspec = getattr(item, "callspec", None)
        for mark in item.iter_markers("sweep"):
            name = mark.args[0]
            if callspec is None or name not in callspec.params:
                if mark in getattr(getattr(item, "function", None), "pytestmark", ()):  # (a module's pytestmark
                    raise ValueError(f"{item.nodeid}: @pytest.mark.sweep({name!r}) names no parameter of the test")
                continue  # sweeps the tests that have the parameter)
            others = tuple(sorted((k, repr(v)) for k, v in callspec.params.items() if k != name))
            group = (item.path, getattr(item, "originalname", item.name), name, others)
            value = repr(callspec.params[name])
            values = groups.setdefault(group, [])
            if value not in values:
                values.append(value)
            seen.append((index, mark, group, value))
    kept: dict[tuple, set[str]] = {}
    out: set[int] = set()
    for index, mark, group, value in seen:
        if group not in kept:
            kept[group] = _kept_values(groups[group], mark, group)
        if value not in kept[group]:
            out.add(index)
    return out


def _kept_values(values: list[str], mark: Any, group: tuple) -> set[str]:
    keep = mark.kwargs.get("keep")
    extra = mark.kwargs.get("extra", 1)
    chosen = {repr(v) for v in keep} & set(values) if keep is not None else {values[0], values[-1]}
    rest = [v for v in values if v not in chosen]
    if rest and extra:
        start = zlib.crc32(repr(group[1:]).encode()) % len(rest)  # stable across runs and machines
        chosen.update((rest + rest)[start : start + min(extra, len(rest))])
    return chosen or {values[0]}
