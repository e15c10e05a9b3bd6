"""Modules that moved keep their old dotted paths importable: ZODB names the
class of every stored record by module path, so each class named in the
golden databases (tests/fixtures/schema-*/, made by every schema version)
must still be found there -- else the record loads as a Broken object."""
from __future__ import annotations

import glob
import importlib
import os

import pytest
from ZODB.FileStorage import FileStorage

from ostinato.classcodes import record_class

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')
DATABASES = sorted(glob.glob(os.path.join(FIXTURES, 'schema-*', '*.fs')))


def stored_classes(path):
    storage = FileStorage(path, read_only=True)
    try:
        found = set()
        for txn in storage.iterator():
            for record in txn:
                if record.data:
                    found.add(record_class(record.data))
        return found
    finally:
        storage.close()


def test_there_are_golden_databases():
    assert len(DATABASES) >= 4


@pytest.mark.parametrize('path', DATABASES, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_every_class_a_golden_database_names_is_importable(path):
    missing = []
    for module, name in sorted(stored_classes(path)):
        try:
            getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            missing.append('%s.%s (%s)' % (module, name, e))
    assert not missing, missing


def test_old_paths_name_the_same_classes():
    from ostinato.effects import llm_queue, telegram
    from ostinato.effects.channels.telegram import TelegramState
    from ostinato.effects.llm import queue
    assert llm_queue.LLMState is queue.LLMState
    assert llm_queue.LLMRequest is queue.LLMRequest
    assert llm_queue.LogEntry is queue.LogEntry
    assert telegram.TelegramState is TelegramState
