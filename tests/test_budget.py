"""The default run is smaller than the full run and still runs every area (tests/budget.py):
slow tests and swept-out values are deselected (reported, never skipped silently), the full
run keeps all of them, a module cannot be all slow, and property tests are cut by default."""
from __future__ import annotations

import shutil
from pathlib import Path

import budget
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent

SAMPLE = '''
import pytest

VALUES = ["all", "size1", "size2", "size3", "size7", "random0", "random1", "random2"]


@pytest.mark.slow
def test_slow():
    pass


def test_quick():
    pass


@pytest.mark.sweep("chunking", keep=("all", "size1"))
@pytest.mark.parametrize("case", range(12))
@pytest.mark.parametrize("chunking", VALUES)
def test_swept(case, chunking):
    pass


@pytest.mark.sweep("chunking")
@pytest.mark.parametrize("chunking", VALUES)
def test_first_and_last(chunking):
    pass
'''


@pytest.fixture
def sample(pytester, monkeypatch, request):
    # the inner sessions load a hypothesis profile and may set FULL_ENV: both put back after
    monkeypatch.setenv(budget.FULL_ENV, "0")
    full = budget.full_requested(request.config)
    request.addfinalizer(lambda: settings.load_profile("tokenparse-full" if full else "tokenparse-default"))
    monkeypatch.setattr(budget, "FULL", full)
    for name in ("conftest.py", "budget.py"):
        shutil.copy(HERE / name, pytester.path / name)
    pytester.makepyfile(test_sample=SAMPLE)
    pytester.makeini("[pytest]\nmarkers =\n    slow: full run only\n    sweep: default run keeps a subset\n")
    return pytester


def _ran(result) -> list[str]:
    return [r.nodeid.split("::")[1] for r in result.getreports("pytest_runtest_logreport") if r.when == "call"]


def test_default_run_deselects_slow_tests_and_sweeps_a_subset(sample):
    result = sample.inline_run("-p", "no:randomly")
    ran = _ran(result)
    assert "test_quick" in ran and "test_slow" not in ran
    swept = [n for n in ran if n.startswith("test_swept")]
    # per case: the two kept values and one more
    assert len(swept) == 12 * 3
    for case in range(12):
        assert f"test_swept[all-{case}]" in ran and f"test_swept[size1-{case}]" in ran
    # the extra value turns with the case: across the cases more than the kept values run
    assert len({n.split("[")[1].split("-")[0] for n in swept}) > 3
    first_last = sorted(n for n in ran if n.startswith("test_first_and_last"))
    assert first_last[:2] == ["test_first_and_last[all]", "test_first_and_last[random2]"] and len(first_last) == 3
    deselected = len(result.getcalls("pytest_deselected")[0].items)
    assert deselected + len(ran) == 1 + 1 + 12 * 8 + 8


def test_full_run_runs_everything(sample):
    result = sample.inline_run("--full", "-p", "no:randomly")
    assert len(_ran(result)) == 1 + 1 + 12 * 8 + 8
    assert not result.getcalls("pytest_deselected")


def test_a_module_that_is_all_slow_is_refused(sample):
    sample.makepyfile(test_all_slow="import pytest\n\n\n@pytest.mark.slow\ndef test_only():\n    pass\n")
    result = sample.runpytest_inprocess("-p", "no:randomly")
    assert result.ret != 0
    assert "test_all_slow.py runs in the default run" in "\n".join(result.errlines + result.outlines)


def test_default_examples_cut_and_never_raise_a_count():
    for own in (1, 5, 10, 11, 25, 100, 150, 300, 1500):
        cut = budget.default_examples(own)
        assert min(own, budget.FLOOR) <= cut <= own
    assert budget.default_examples(1500) == 150


def test_cap_examples_cuts_a_property_test_once():
    calls = []

    @settings(max_examples=200, database=None)
    @given(st.integers())
    def prop(n):
        calls.append(n)

    assert budget.cap_examples(prop) and budget.cap_examples(prop)  # twice: cut once
    prop()
    assert 0 < len(calls) <= budget.default_examples(200)
    assert not budget.cap_examples(test_cap_examples_cuts_a_property_test_once)


def test_split_points_spread_over_the_response(monkeypatch):
    monkeypatch.setattr(budget, "FULL", False)
    assert list(budget.split_points(10)) == list(range(1, 10))
    points = list(budget.split_points(500))
    assert len(points) <= budget.DEFAULT_SPLITS and points[0] == 1 and points[-1] == 499
    assert max(b - a for a, b in zip(points, points[1:])) <= 500 // (budget.DEFAULT_SPLITS - 2)
    monkeypatch.setattr(budget, "FULL", True)
    assert list(budget.split_points(500)) == list(range(1, 500))


class _Plugins:
    def __init__(self, names):
        self.names = names

    def has_plugin(self, name):
        return name in self.names


def _config(tmp_path, *args, plugins=("xdist",), rootpath=None, **options):
    from types import SimpleNamespace

    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_x.py").touch()
    option = {"numprocesses": None, "dist": "no", "tx": [], "distload": False, "usepdb": False,
              "collectonly": False, "full": False, **options}
    return SimpleNamespace(option=SimpleNamespace(**option), args=list(args) or ["tests"],
                           pluginmanager=_Plugins(plugins), rootpath=rootpath or tmp_path,
                           invocation_params=SimpleNamespace(dir=tmp_path),
                           getoption=lambda name: option[name.lstrip("-")])


def test_parallel_workers_only_for_a_whole_default_run(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv(budget.FULL_ENV, raising=False)
    tests = tmp_path / "tests"
    workers = lambda *args, cores=2, memory=None, **kwargs: budget.parallel_workers(_config(tmp_path, *args, **kwargs),
                                                                                   tests, cores, memory)
    assert workers() == 2 and workers(".") == 2 and workers(cores=64) == budget.MAX_WORKERS
    assert workers(cores=1) == 0
    gb = 1 << 30
    assert workers(cores=8, memory=64 * gb) == budget.MAX_WORKERS and workers(cores=8, memory=12 * gb) == 3
    assert workers(memory=6 * gb) == 0  # one worker's worth: serial
    cores, memory = budget.machine()
    assert cores >= 1 and (memory is None or memory > gb)
    assert workers(full=True) == 0
    assert workers(plugins=()) == 0  # -p no:xdist, or xdist not installed
    assert workers(numprocesses=0) == 0 and workers(numprocesses=3) == 0  # the user's own -n
    assert workers(dist="loadscope") == 0 and workers(tx=["popen"]) == 0 and workers(distload=True) == 0
    assert workers(usepdb=True) == 0 and workers(collectonly=True) == 0
    assert workers("tests/test_x.py") == 0 and workers("tests/test_x.py::test_y") == 0  # files named
    assert workers(rootpath=tmp_path / "elsewhere") == 0  # a pytester session inside a test
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert workers() == 0
    monkeypatch.setenv(budget.FULL_ENV, "1")
    assert workers() == 0
