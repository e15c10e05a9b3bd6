"""Built-ins that reach the scheduler: raise, sleep, Queue, put, take.

They never wait themselves: a built-in that needs time to pass or an item to
arrive raises `Suspend` with a request, and the scheduler resumes the task
with the result (DESIGN.md §1, rule 3).
"""
from . import limits
from . import requests as R
from .values import BUILTINS, Builtin, OQueue, OstError, OstRaise, kind


class Suspend(Exception):
    """Raised by a built-in that needs the outside world.  `request` is one of
    the records of vm/requests.py; when the host resumes the task it pushes the
    request's result onto the frame's stack (or raises an error there)."""

    def __init__(self, request):
        super().__init__(request)
        self.request = request


def b_raise(vm, value):
    if value is None:
        return None
    raise OstRaise(value)


MAX_SLEEP = 10 ** 9      # seconds (about 31 years): a wake time the clock can hold


def b_sleep(vm, seconds):
    if type(seconds) not in (int, float):
        raise OstError('sleep() does not accept %s' % kind(seconds))
    if seconds != seconds:
        raise OstError('sleep() needs a number of seconds, not nan')
    if seconds > MAX_SLEEP:
        shown = ('a %d-digit number of' % len(str(seconds)) if type(seconds) is int
                 and seconds > 10 ** 20 else '%g' % seconds)
        raise OstError('sleep() cannot wait %s seconds; at most %d (about 31 years)'
                       % (shown, MAX_SLEEP))
    raise Suspend(R.Sleep(seconds))


def b_queue(vm):
    return OQueue()


def _queue_arg(name, q):
    if type(q) is not OQueue:
        raise OstError('%s() does not accept %s' % (name, kind(q)))


def b_put(vm, q, value):
    _queue_arg('put', q)
    if value is None:
        raise OstError('put() cannot put none in a queue')
    if len(q.items) >= limits.MAX_ITEMS:
        limits.check_items(len(q.items) + 1)
    vm.host.put(q, value)
    return None


def b_take(vm, q):
    _queue_arg('take', q)
    if q.items and not q.takers:
        v = q.items.pop(0)
        q._p_changed = True
        if vm.host.waiters:
            vm.host.changed(q)
        return v
    raise Suspend(R.Take(q))


def goal_stack(frame):
    """The goal blurbs of a task's frames, outermost first (what the model is
    shown as where it is)."""
    out = []
    while frame is not None:
        g = frame.goal
        summary = getattr(g, 'summary', None) if g is not None else None
        if summary is None and g is not None and hasattr(g, 'code'):
            summary = g.code.summary
        if summary:
            out.append(summary)
        frame = frame.caller
    return '\n'.join(reversed(out))


def b_llm_request(vm, prompt, schema, system, model, temperature):
    """The primitive under `llm.agent`: suspends the task with a request the
    LLM service performs after the commit."""
    import json
    from .printing import to_json
    from .values import OMap
    if type(prompt) is not str:
        raise OstError('agent() does not accept %s' % kind(prompt))
    if schema is not None and type(schema) is not OMap:
        raise OstError('agent() does not accept %s' % kind(schema))
    for v in (system, model):
        if v is not None and type(v) is not str:
            raise OstError('agent() does not accept %s' % kind(v))
    if temperature is not None and type(temperature) not in (int, float):
        raise OstError('agent() does not accept %s' % kind(temperature))
    raise Suspend(R.AskModel({
        'prompt': prompt,
        'schema': None if schema is None else json.loads(to_json(schema)),
        'system': system,
        'model': model,
        'temperature': None if temperature is None else float(temperature),
        'goal_stack': goal_stack(vm.task.frame if vm.task is not None else None),
    }))


def b_now_in(vm, tz):
    """The current time in the IANA zone `tz` (the server's local zone when
    tz is none or unknown), in the `now()` form: message timestamps."""
    from . import timefmt
    return timefmt.iso_at(timefmt.clock(), tz)


def b_deliver(vm, channel, thread_id, text):
    """Hand a bot message to its channel (the host's outbox), or, for a
    channel that prints its messages (the console), show it with the turn's
    output, in order with what the program prints."""
    shown = vm.host.deliver(channel, thread_id, text)
    if shown is not None:
        vm.write('%s\n' % (shown,))
    return None


def b_show(vm, value):
    """The REPL shows the value of an expression statement with this."""
    if value is not None:
        from .printing import display
        vm.write(display(value) + '\n')
    return None


for _name, _fn, _params in [('__show__', b_show, ('value',)),
                            ('__now_in__', b_now_in, ('timezone',)),
                            ('__deliver__', b_deliver, ('channel', 'thread', 'text')),
                            ('__llm_request__', b_llm_request,
                             ('prompt', 'schema', 'system', 'model', 'temperature')),('raise', b_raise, ('value',)), ('sleep', b_sleep, ('seconds',)),
                            ('Queue', b_queue, ()), ('put', b_put, ('queue', 'value')),
                            ('take', b_take, ('queue',))]:
    BUILTINS[_name] = Builtin(_name, _fn, _params, ctx=True)
