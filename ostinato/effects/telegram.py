"""The old home of effects/channels/telegram.py, kept importable for the
databases: ZODB names a stored object's class by its module path, and
databases written before the move hold a TelegramState record under
`ostinato.effects.telegram`.  New code imports effects.channels.telegram."""
from .channels.telegram import TelegramState  # noqa: F401
