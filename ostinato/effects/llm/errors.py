"""The two ways a leaf call can fail, and which side of the queue decides.

`LLMError` is final: the request is answered with it and the skill sees an
`Error` whose message is `str(e)`, so every message starts `llm: ` and says
what to do.  `LLMUnavailable` is transient: the model could not be reached
or the server broke down (refused, timed out, HTTP 5xx); the durable queue
keeps the task waiting and tries again later, and `str(e)` is the one line it
logs each time, so it must name the server and the likely fix.
`LLMCrashed` is the transient failure that may be the request's own fault:
the model's process died while answering it.  The queue asks once more, and
if the process dies on the same request again, answers it with an error
instead of crashing the model forever.
`LLMTimeout` is the transient failure that counts too: the server took the
request and gave no reply within the timeout; after a few of those in a
row the request fails (like an activity's start-to-close timeout and
retry limit in Temporal), since asking again may only load the model more.
"""


class LLMError(Exception):
    """A final failure of an LLM request; the message starts with 'llm: '.

    `details` is None, or, when the model was asked but never gave a valid
    reply, the dict `LLMClient.complete` would have returned (with `reply`
    None), so the audit log can still show every exchange.
    """

    def __init__(self, message: str):
        if not message.startswith('llm: '):
            message = 'llm: ' + message
        super().__init__(message)
        self.details: 'dict | None' = None


class LLMUnavailable(Exception):
    """The model cannot be reached right now; ask again later."""


class LLMCrashed(LLMUnavailable):
    """The model's process died (or hung) while answering this request; its
    message says how it ended and where its log is."""


class LLMTimeout(LLMUnavailable):
    """The server took the request but gave no reply within the timeout."""
