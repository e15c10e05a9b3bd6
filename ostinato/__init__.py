"""Ostinato: reliable LLM chat agents on local models.

Layers, each importing only those before it: syntax -> compiler -> vm ->
runtime -> effects; `cli` ties them together.
"""
__version__ = '0.1.0'

# Before anything is pickled or loaded: the stored format's class codes.
from . import classcodes  # noqa: F401
