"""The chat channels: the conversation model they share (chat.py: users,
threads, messages in the `channels` module of the standard library), the
console (console.py) and Telegram (telegram.py over the Bot API client of
telegram_api.py).  The web channel is its own package, effects/web/."""
