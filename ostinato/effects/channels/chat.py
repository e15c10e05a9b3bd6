"""What every chat channel does with the `channels` module's objects.

A channel (the console, Telegram) turns an incoming text into a `Message`
appended to its `Thread`, inside the transaction that also acknowledges the
text to its source; a thread's first message puts the thread into the
database's `new_threads()` queue in that same transaction, so a crash loses
no one and starts no one twice.  This module owns that step, so the
channels differ only in how texts arrive and how replies leave.
"""
from __future__ import annotations

from ...runtime import report
from ...runtime.world import Watch
from ...vm import ops
from ...vm import timefmt
from ...vm.printing import to_str
from ...vm.values import OList, OMap, OObject

ASKED_WIDTH = 60      # the bot's message quoted in "ann's reply to: ..."


def channels_module(world):
    """The loaded `channels` module, or None while no program uses it (then
    a channel keeps its input: nobody would read it)."""
    m = world.modules.get('channels')
    if m is None or type(m.ns.get('threads')) is not OMap:
        return None
    return m


def new_user(world, user_id, name):
    return ops.construct(channels_module(world).ns['User'], {'id': user_id, 'name': name})


def receive(sched, key, channel, thread_id, user, text, when=None):
    """Append the user's `text` to the thread `key` of the channels module
    (made, for `user`, on its first message), stamped `when` (Unix seconds;
    now by default) in the user's zone.  Returns the thread."""
    ns = channels_module(sched.world).ns
    threads = ns['threads']
    thread = threads.d.get(key)
    if thread is None:
        thread = ops.construct(ns['Thread'], {'id': thread_id, 'channel': channel,
                                              'user': user, 'messages': OList()})
        threads.d[key] = thread
        threads.added(key)     # its store compares none of the other threads
    messages = thread.get('messages')
    first = not messages.items
    stamp = timefmt.iso_at(timefmt.clock() if when is None else when, user.get('timezone'))
    messages.items.append(ops.construct(ns['Message'], {'when': stamp, 'sender': user,
                                                        'text': text}))
    messages.changed()
    if sched.world.watching:
        sched.changed(messages)
    if first:
        sched.put(ns['threads_queue'], thread)
    return thread


@report.wait_words
def waits_for_reply(task, now):
    """`ann's reply to: When, roughly, was lunch?` for a task waiting on a
    chat thread (the user's name and the bot's last message there), or
    `ann's next message` before the bot said anything."""
    w = task.waiting
    if not isinstance(w, Watch):
        return None
    for o in w.objs or ():
        if type(o) is OObject and o.type.name == 'Thread':
            messages, user = o.vals.get('messages'), o.vals.get('user')
            if type(messages) is OList and type(user) is OObject:
                break
    else:
        return None
    name = user.vals.get('name') or user.vals.get('id') or 'the user'
    who = '%s\'s' % to_str(name)
    for m in reversed(messages.items):
        if type(m) is OObject and m.vals.get('sender') is None:
            return '%s reply to: %s' % (who, report.short(to_str(m.vals.get('text')),
                                                          ASKED_WIDTH))
    return '%s next message' % who
