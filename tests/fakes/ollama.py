"""A fake Ollama server: /api/chat (non-streaming), /api/tags, /api/version.

Answers in Ollama's shapes, including its words for a model it does not
have (HTTP 404, "model 'x' not found, try pulling it first"), so the client
is tested against what a real server says.  See fakes/__init__.py for the
behaviours a test can queue.
"""
from __future__ import annotations

from fakes import FakeServer


class FakeOllama(FakeServer):
    chat_path = '/api/chat'

    def chat_payload(self, raw, body, extras):
        return {
            'model': (body or {}).get('model', '?'),
            'created_at': '2026-01-01T00:00:00Z',
            'message': {'role': 'assistant', 'content': raw},
            'done': True,
            'done_reason': 'length' if extras.get('truncated') else 'stop',
            'total_duration': 1000000,
            'prompt_eval_count': extras.get('prompt_tokens', 12),
            'eval_count': extras.get('reply_tokens', 7),
        }

    def error_payload(self, message):
        return {'error': message}

    def not_found_payload(self, model):
        return {'error': "model '%s' not found, try pulling it first" % model}

    def get_routes(self):
        return {
            '/api/tags': {'models': [{'name': m, 'model': m} for m in self.models]},
            '/api/version': {'version': '0.0.0-fake'},
            '/': 'Ollama is running',
        }
