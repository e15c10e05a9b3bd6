"""Simulated users talking to a served skill, on the real runtime.

The skill file is loaded as `ostinato run` loads it, so its `serve(...)`
starts the router of core_skills exactly as in production; the simulated
users are a chat channel (`Simulation`, a service like the console) that
writes each user's messages into a thread of its own and reads the bot's
messages from it.  All runs of a case file share one database, one
scheduler and one LLM queue: `jobs` dialogues run at once and their model
requests wait their turn first come, first served, as in `ostinato serve`.

`EvalScheduler` adds what only an evaluation needs, without changing the
runtime: each task is attributed to its run (the task the router spawns for
a thread, and everything that task spawns), so that every run has a
virtual clock of its own (message times and `now()` follow the simulated
user, not the machine), its LLM requests and error reports are known, and
the tasks of a run that was ended early (too chatty) are stopped instead
of running on.
"""
from __future__ import annotations

import os
import time
from datetime import datetime

from ..effects.channels.chat import channels_module, new_user, receive
from ..effects.service import Service
from ..runtime.scheduler import Scheduler, format_report
from ..runtime.world import Watch
from ..vm import ops
from ..vm.values import Builtin, Frame, OList, OMap, OModule, OObject, OSet, OstError, Task

CHANNEL = 'eval'

# How a run ended (besides its expectations).
ENDED = 'ended'                    # the dialogue ended and the user had nothing more to say
SILENT = 'silent'                  # the bot asked something no rule answers, and no `otherwise`
CHATTY = 'too chatty'
TOO_MANY_CALLS = 'too many LLM calls'
STUCK = 'stuck'                    # the dialogue waits for something no one will ever do

FAILING_ENDS = (CHATTY, TOO_MANY_CALLS, STUCK)

# An expectation that runs longer than this many VM steps is given up.
EXPECT_STEPS = 2_000_000


class SkillError(Exception):
    """The skill file cannot be served (its top level failed, or it serves
    nothing); the message is for the operator."""


class Run:
    """One dialogue of one case: the simulated user's side of it."""

    def __init__(self, case, case_index, number, key):
        self.case = case
        self.case_index = case_index  # its place in the case file, from 0
        self.number = number          # 1-based
        self.key = key                # the thread's key and id, and the user's id
        self.now = case.start.timestamp()
        self.said = 0                 # opening messages sent (case.say)
        self.asked = 0                # bot messages answered
        self.uses = [0] * len(case.answers)
        self.seqs = []                # its LLM requests, by queue sequence number
        self.errors = []              # error reports of its tasks, and what they printed
        self.started = None
        self.seconds = None
        self.end = None               # how it ended (ENDED, SILENT, ...)

    def answer(self, unanswered):
        """The user's reply to the bot's unanswered messages: the first rule
        whose pattern matches the newest message (then the one before...);
        a rule's answers are used in turn, its last one again and again.
        None: the user goes silent."""
        for text in reversed(unanswered):
            for k, rule in enumerate(self.case.answers):
                if rule.pattern.search(text):
                    i = self.uses[k]
                    self.uses[k] += 1
                    return rule.says[min(i, len(rule.says) - 1)]
        return self.case.otherwise


class VirtualClock:
    """`timefmt.clock` during an eval: the clock of the run whose task is
    running (it moves only when its simulated user writes); the machine's
    time for tasks of no run (the router)."""

    def __init__(self):
        self.run = None

    def __call__(self):
        return self.run.now if self.run is not None else time.time()


class _Collector:
    """The scheduler's output streams: text printed or reported by a run's
    task goes into that run's errors (shown in its transcript); anything
    else to the operator's stream."""

    def __init__(self, sched_ref, fallback):
        self.sched_ref = sched_ref
        self.fallback = fallback

    def write(self, text):
        run = self.sched_ref().current_run
        if run is not None:
            run.errors.append(text)
        elif text:
            self.fallback.write(text)

    def flush(self):
        self.fallback.flush()


class EvalScheduler(Scheduler):
    def __init__(self, world, sim, err):
        import weakref
        ref = weakref.ref(self)
        super().__init__(world, out=_Collector(ref, err), err=_Collector(ref, err))
        self.sim = sim
        self.current_run = None       # the run whose task runs now (current is the task)
        self.task_runs = {}           # task id -> Run (this process's tasks)

    def run_of(self, task):
        return self.task_runs.get(task.id)

    def run_one(self):
        task = next(iter(self.world.ready))
        run = self.run_of(task)
        self.current_run = run
        self.sim.clock.run = run
        if run is not None:
            self.sim.zone_for(run)
        try:
            super().run_one()
        finally:
            self.current_run = None
            self.sim.clock.run = None

    def spawn(self, vm, func, args, kwargs):
        t = super().spawn(vm, func, args, kwargs)
        run = self.current_run or self.sim.run_in(list(args) + list(kwargs.values()))
        if run is not None:
            self.task_runs[t.id] = run
        return t

    def suspend(self, task, request):
        super().suspend(task, request)
        run = self.run_of(task)
        if run is not None and request.kind == 'llm' and type(task.waiting) is tuple \
                and task.waiting[0] == 'llm':
            run.seqs.append(task.waiting[1])

    def deliver(self, channel, thread_id, text):
        if channel == CHANNEL:
            return None     # the simulated user reads the thread itself
        return super().deliver(channel, thread_id, text)

    def stop_run(self, run):
        """End the tasks of a run that was ended early (too chatty, too
        many model calls): out of the ready queue and of whatever they wait
        for, their model requests withdrawn -- nothing of the run goes on."""
        from ..effects.llm.queue import llm_state
        w = self.world

        def stop():
            pending = llm_state(w).pending
            for seq in run.seqs:
                if seq in pending:
                    del pending[seq]
            for tid, r in list(self.task_runs.items()):
                t = w.tasks.get(tid) if r is run else None
                if t is not None and not t.done:
                    self.detach(t)
                    del w.tasks[tid]
                    t.done = True
                    t.state = 'done'
                    t.waiting = None
        self.transact(stop)

    def report(self, task):
        run = self.run_of(task)
        if run is None:
            return super().report(task)
        if not task.reported:
            task.reported = True
            run.errors.append(format_report(task))


class Simulation(Service):
    """The simulated users of one case file's runs, as a chat channel."""

    def __init__(self, runs, jobs, finish, progress=None):
        super().__init__()
        self.pending = list(runs)     # runs not started, in order
        self.active = []
        self.jobs = max(1, jobs)
        self.finish_cb = finish       # finish(run): evaluate and record an ended run
        self.progress = progress
        self.clock = VirtualClock()
        self.by_key = {}              # thread key -> Run
        self.loaded = False
        self.zone = None
        self.saved_tz = os.environ.get('TZ')

    # ------------------------------------------------------------ service protocol
    def busy(self, sched):
        return bool(self.pending or self.active)

    def poll(self, sched):
        w = sched.world
        if not self.loaded:
            if not self._skill_ready(sched):
                return
            self.loaded = True
        idle = not w.ready and not w.timers and not _llm_pending(w)
        acted = False
        for run in list(self.active):
            acted = self.step(sched, run) or acted
        while len(self.active) < self.jobs and self.pending:
            run = self.pending.pop(0)
            self.start(sched, run)
            acted = True
        if idle and not acted and not w.ready:
            # Nothing can move any more, yet runs are under way: their
            # dialogues wait for something no one will ever do.
            for run in list(self.active):
                self.end(sched, run, STUCK)
        if self.progress is not None:
            self.progress.update(self.active)

    def _skill_ready(self, sched):
        main = sched.world.main_task
        if main is None or not main.done:
            return False
        if main.state == 'failed':
            raise SkillError('its top level failed (the error is above)')
        # serve() keeps the skills in core_skills' router, by registering
        # module; when none is there, no dialogue would ever start.
        core = sched.world.modules.get('core_skills')
        router = core.ns.get('router') if core is not None else None
        skills = router.d.get('skills') if type(router) is OMap else None
        if channels_module(sched.world) is None or core is None or (
                type(skills) is OMap and not any(type(fs) is OList and fs.items
                                                 for fs in skills.d.values())):
            raise SkillError('it serves no skill: call serve(skill) at its top level')
        return True

    # ------------------------------------------------------------ runs
    def run_in(self, values):
        """The run a thread (or a conversation about one) among `values`
        belongs to: how the task the router spawns for a thread is known."""
        for v in values:
            if type(v) is OObject:
                for cand in (v, v.vals.get('thread')):
                    if type(cand) is OObject and cand.type.name == 'Thread':
                        run = self.by_key.get(cand.vals.get('id'))
                        if run is not None:
                            return run
        return None

    def zone_for(self, run):
        """`now()` gives the local time of the process: make that the
        simulated user's zone while their run's tasks run."""
        name = run.case.zone_name
        if name != self.zone:
            os.environ['TZ'] = name
            time.tzset()
            self.zone = name

    def restore_zone(self):
        if self.zone is not None:
            if self.saved_tz is None:
                os.environ.pop('TZ', None)
            else:
                os.environ['TZ'] = self.saved_tz
            time.tzset()
            self.zone = None

    def start(self, sched, run):
        run.started = time.monotonic()
        self.by_key[run.key] = run
        self.active.append(run)
        self.say_next(sched, run, first=True)

    def thread(self, sched, run):
        return channels_module(sched.world).ns['threads'].d.get(run.key)

    def say_next(self, sched, run, first=False):
        say = run.case.say[run.said]
        step = 0 if first else run.case.file.reply_seconds
        when = run.now + step
        if say.at is not None:
            at = datetime.combine(run.case.start.date(), say.at, run.case.zone).timestamp()
            when = max(when, at)
        run.said += 1
        self.write(sched, run, say.text, when)

    def write(self, sched, run, text, when):
        run.now = when

        def intake():
            thread = self.thread(sched, run)
            if thread is None:
                user = new_user(sched.world, run.key, run.case.user)
                ops.set_field(user, 'timezone', run.case.zone_name)
            else:
                user = thread.vals['user']
            receive(sched, run.key, CHANNEL, run.key, user, text, when=when)
        sched.transact(intake)

    def step(self, sched, run):
        """Look at one run between two turns and act for its user; True
        when something was done."""
        thread = self.thread(sched, run)
        if thread is None:
            return False
        messages = thread.vals['messages']
        ms = messages.items
        bot = [m for m in ms if m.vals.get('sender') is None]
        if len(bot) > run.case.max_bot_messages:
            self.end(sched, run, CHATTY)
            return True
        if len(run.seqs) > run.case.max_llm_calls:
            self.end(sched, run, TOO_MANY_CALLS)
            return True
        conv = thread.vals.get('conversation')
        if conv is None:
            return False                   # the router has not taken the thread yet
        task = conv.vals.get('task')
        if task is None:
            seen = conv.vals.get('seen') or 0
            if any(m.vals.get('sender') is not None for m in ms[seen:]):
                return False               # a dialogue is about to start
            if run.said < len(run.case.say):
                self.say_next(sched, run)
            else:
                self.end(sched, run, ENDED)
            return True
        if task.done or not _waits_on(task, messages) or task in sched.world.ready:
            return False
        unanswered = []
        for m in reversed(ms):
            if m.vals.get('sender') is not None:
                break
            unanswered.append(m.vals.get('text'))
        text = run.answer(list(reversed(unanswered)))
        if text is None:
            self.end(sched, run, SILENT)
            return True
        run.asked += 1
        self.write(sched, run, text, run.now + run.case.file.reply_seconds)
        return True

    def end(self, sched, run, how):
        run.end = how
        run.seconds = time.monotonic() - run.started
        self.active.remove(run)
        self.restore_zone()             # the transcript shows the machine's times in its zone
        self.finish_cb(sched, run, self.thread(sched, run))
        if how in FAILING_ENDS:
            sched.stop_run(run)


def _llm_pending(world):
    from ..effects.llm.queue import llm_state
    st = llm_state(world, make=False)
    return bool(st is not None and st.pending)


def _waits_on(task, obj):
    """Whether the task waits for a change of `obj` (the dialogue waiting for
    the user's next message waits on the thread's messages), by its record:
    one whose wait fired may still say so while it is in the ready queue
    (runtime/world.py ReadyQueue.wake)."""
    w = task.waiting
    return task.state == 'waiting' and type(w) is Watch and any(o is obj for o in w.objs)


# ------------------------------------------------------------------ expectations

def expectation_helpers(case, notes=None):
    """near(), mentions() and only(), for the expectations of `case`.
    only() puts the items it found out of place into `notes` (a list), for
    the message of the expectation that fails."""
    notes = [] if notes is None else notes
    def near(t, hhmm, minutes):
        if type(t) is not str:
            raise OstError('near() needs an ISO time text, not %s' % _shown(t))
        text = t.strip()
        if text.endswith(('Z', 'z')):          # Python 3.10 reads only '+00:00'
            text = text[:-1] + '+00:00'
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise OstError('near(): %s is not an ISO time' % _shown(t)) from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=case.zone)
        if type(hhmm) is not str:
            raise OstError("near() needs the clock time as 'HH:MM', not %s" % _shown(hhmm))
        try:
            h, m = hhmm.strip().split(':')
            target = case.start.replace(hour=int(h), minute=int(m), second=0, microsecond=0)
        except ValueError:
            raise OstError("near() needs the clock time as 'HH:MM', not %s"
                           % _shown(hhmm)) from None
        if minutes is None:
            minutes = 45
        if type(minutes) not in (int, float) or type(minutes) is bool:
            raise OstError('near(): minutes must be a number, not %s' % _shown(minutes))
        local = dt.astimezone(case.zone)
        return local.date() == case.start.date() and \
            abs((local - target).total_seconds()) <= minutes * 60

    def mentions(value, word):
        if type(word) is not str:
            raise OstError('mentions() looks for a word given as a string, not %s'
                           % _shown(word))
        return _mentions(value, word.lower(), set())

    def only(items, phrases):
        if type(phrases) is str:
            phrases = OList([phrases])
        if type(phrases) not in (OList, OSet) or not all(
                type(p) is str for p in _elements(phrases)):
            raise OstError('only() needs the phrases as a list of strings, not %s'
                           % _shown(phrases))
        wanted = [p.strip().lower() for p in _elements(phrases) if p.strip()]
        if not wanted:
            raise OstError('only() needs at least one phrase')
        stray = [x for x in _strings(items, 'only()')
                 if not any(w in x.lower() for w in wanted)]
        if stray:
            notes.append('not among the phrases: %s' % ', '.join(_shown(x) for x in stray))
        return not stray

    return {'near': Builtin('near', near, ('time', 'clock', 'minutes')),
            'mentions': Builtin('mentions', mentions, ('value', 'word')),
            'only': Builtin('only', only, ('items', 'phrases'))}


def _elements(v):
    return v.items if type(v) is OList else list(v.d) if type(v) is OSet else [v]


def _strings(v, who):
    """The strings of `v`: a string, or a list or set of them (nested ones
    too); anything else is an error, so that a log of objects is not
    passed where its items were meant."""
    t = type(v)
    if t is str:
        return [v]
    if t is OList or t is OSet:
        return [x for item in _elements(v) for x in _strings(item, who)]
    if v is None:
        return []
    raise OstError('%s looks at items given as strings or lists of strings, not %s'
                   % (who, _shown(v)))


def _mentions(v, word, seen):
    t = type(v)
    if t is str:
        return word in v.lower()
    if id(v) in seen:
        return False
    seen.add(id(v))
    if t is OList or t is tuple or t is list:
        items = v.items if t is OList else v
        return any(_mentions(x, word, seen) for x in items)
    if t is OMap:
        return any(_mentions(k, word, seen) or _mentions(x, word, seen) for k, x in v.d.items())
    if t is OSet:
        return any(_mentions(x, word, seen) for x in v.d)
    if t is OObject:
        return any(_mentions(x, word, seen) for x in v.vals.values())
    return False


def _shown(v):
    from ..vm.printing import display
    try:
        return display(v)
    except Exception:
        return repr(v)


def evaluate(sched, case, names):
    """Each expectation of `case` with `names` bound: a list of
    (expectation, None when true | 'is false' | 'error: ...').  Nothing the
    expressions change is kept (the caller aborts the transaction)."""
    from ..vm.printing import to_str
    notes = []
    helpers = expectation_helpers(case, notes)
    outcomes = []
    for e in case.expect:
        del notes[:]
        m = OModule('<expect>')
        m.ns.update(names)
        m.ns.update(helpers)
        task = Task(0, '<expect>', Frame(e.code, m, m, None, None))
        problem = None
        try:
            status = sched.vm.run(task, EXPECT_STEPS)
        except Exception as x:        # a bug of ours must not end the eval
            status = None
            problem = 'error: internal error: %s: %s' % (type(x).__name__, x)
        if status == 'done':
            if not ops.truthy(m.ns.get('__result__')):
                # What only() found out of place says why at once.
                problem = 'is false' + ''.join(' (%s)' % n for n in notes)
        elif status == 'failed':
            err = task.error
            msg = err.vals.get('message') if type(err) is OObject else err
            problem = 'error: %s' % (to_str(msg) if msg is not None else _shown(err))
        elif status == 'yield':
            problem = 'error: it did not finish in %d steps' % EXPECT_STEPS
        elif problem is None:
            problem = 'error: an expectation cannot wait (it asked for %s)' % (status[1].kind,)
        del sched.buffer[:]
        outcomes.append((e, problem))
    sched.vm.task = None
    return outcomes
