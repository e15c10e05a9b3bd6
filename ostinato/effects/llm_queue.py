"""The old home of effects/llm/queue.py, kept importable for the databases:
ZODB names a stored object's class by its module path, and databases
written before the move hold LLMState, LLMRequest and LogEntry records
under `ostinato.effects.llm_queue`.  New code imports effects.llm.queue."""
from .llm.queue import LLMRequest, LLMState, LogEntry  # noqa: F401
