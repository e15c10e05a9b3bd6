"""A fake OpenAI-compatible server: /v1/chat/completions and /v1/models.

Answers in the OpenAI chat API's shapes (errors as {"error": {"message":
...}}), as llama.cpp's server, vLLM and Ollama's /v1 do.  See
fakes/__init__.py for the behaviours a test can queue.
"""
from __future__ import annotations

from fakes import FakeServer


class FakeOpenAI(FakeServer):
    chat_path = '/v1/chat/completions'

    def __init__(self, models=('local-model',)):
        super().__init__(models=models)

    def chat_payload(self, raw, body, extras):
        prompt_tokens = extras.get('prompt_tokens', 20)
        reply_tokens = extras.get('reply_tokens', 9)
        return {
            'id': 'chatcmpl-fake',
            'object': 'chat.completion',
            'created': 1767225600,
            'model': (body or {}).get('model', '?'),
            'choices': [{
                'index': 0,
                'message': {'role': 'assistant', 'content': raw},
                'finish_reason': 'length' if extras.get('truncated') else 'stop',
            }],
            'usage': {'prompt_tokens': prompt_tokens, 'completion_tokens': reply_tokens,
                      'total_tokens': prompt_tokens + reply_tokens},
        }

    def error_payload(self, message):
        return {'error': {'message': message, 'type': 'invalid_request_error', 'code': None}}

    def not_found_payload(self, model):
        return {'error': {'message': 'The model `%s` does not exist.' % model,
                          'type': 'invalid_request_error', 'code': 'model_not_found'}}

    def get_routes(self):
        return {'/v1/models': {'object': 'list',
                               'data': [{'id': m, 'object': 'model'} for m in self.models]}}
