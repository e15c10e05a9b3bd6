"""Built-ins that reach the scheduler: raise, sleep, Queue, put, take.

They never wait themselves: a built-in that needs time to pass or an item to
arrive raises `Suspend` with a request, and the scheduler resumes the task
with the result (DESIGN.md §1, rule 3).
"""
from .values import BUILTINS, Builtin, OQueue, OstError, OstRaise, kind


class Suspend(Exception):
    """Raised by a built-in that needs the outside world.  `request` is a tuple
    the host understands; when the host resumes the task it pushes the
    request's result onto the frame's stack (or raises an error there)."""

    def __init__(self, request):
        super().__init__(request)
        self.request = request


def b_raise(vm, value):
    if value is None:
        return None
    raise OstRaise(value)


def b_sleep(vm, seconds):
    if type(seconds) not in (int, float):
        raise OstError('sleep() does not accept %s' % kind(seconds))
    raise Suspend(('sleep', seconds))


def b_queue(vm):
    return OQueue()


def _queue_arg(name, q):
    if type(q) is not OQueue:
        raise OstError('%s() does not accept %s' % (name, kind(q)))


def b_put(vm, q, value):
    _queue_arg('put', q)
    if value is None:
        raise OstError('put() cannot put none in a queue')
    vm.host.put(q, value)
    return None


def b_take(vm, q):
    _queue_arg('take', q)
    if q.items and not getattr(q, 'takers', None):
        v = q.items.pop(0)
        q._p_changed = True
        if vm.host.waiters:
            vm.host.changed(q)
        return v
    raise Suspend(('take', q))


def b_show(vm, value):
    """The REPL shows the value of an expression statement with this."""
    if value is not None:
        from .printing import display
        vm.write(display(value) + '\n')
    return None


for _name, _fn, _params in [('__show__', b_show, ('value',)),('raise', b_raise, ('value',)), ('sleep', b_sleep, ('seconds',)),
                            ('Queue', b_queue, ()), ('put', b_put, ('queue', 'value')),
                            ('take', b_take, ('queue',))]:
    BUILTINS[_name] = Builtin(_name, _fn, _params, ctx=True)
