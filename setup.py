"""The one thing pyproject.toml cannot say: the optional C module. A machine without a
compiler installs tokenparse without it (``optional=True``) and runs the pure-Python
versions of the same functions (tokenparse/token_ids.py)."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("tokenparse._speedups", ["tokenparse/_speedups.c"], optional=True)])
