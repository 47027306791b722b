"""Engine hooks: tokenparse inside the loops that produce token IDs.

Each module here adapts one engine (``vllm``, ``transformers``, ``verl``, ``ray``) and imports
that engine only inside itself, so ``import tokenparse`` never needs any of them. Nothing in
the rest of the package imports from ``tokenparse.integrations``: the arrow of imports points
from the engines to the core, never back.
"""
