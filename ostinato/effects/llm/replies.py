"""What a valid reply is, and what the model is told when its reply is not.

Kept apart from the backends because the contract is the same for every
model: the reply must be one JSON object, matching the request's JSON Schema
when there is one.  A problem is phrased so that it reads both as the
re-ask message the model gets ("Your reply ...") and as the end of the final
error the skill gets, so the log and the error say exactly what the model
was told.
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional, Tuple

import jsonschema
from jsonschema.exceptions import best_match

from .errors import LLMError

MAX_PROBLEM = 300     # a long instance quoted in a schema error must not flood the prompt
# A reply is one small JSON object (num_predict caps it at a few KB); these
# only keep a broken model from filling the audit log or the task's frames.
MAX_REPLY = 1 << 20   # characters
MAX_DEPTH = 100       # arrays and objects inside each other

_FENCE = re.compile(r'\A```[a-zA-Z]*[ \t]*\n(.*)\n```\Z', re.DOTALL)


def check_schema(schema: Any) -> None:
    """A bad schema is the skill's mistake, not the model's: fail before asking."""
    if schema is None:
        return
    if not isinstance(schema, dict):
        raise LLMError('llm: the schema must be a JSON object (a map), not %s'
                       % type(schema).__name__)
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        raise LLMError('llm: the schema is not a valid JSON Schema: %s' % _short(e.message))


def schema_paragraph(schema: Optional[dict]) -> str:
    """Stated in the prompt because servers that constrain the output to the
    schema (Ollama, llama.cpp) do not show it to the model.

    As the reply's shape when the schema has one (`schema_shape`): a small
    model shown the JSON Schema itself copies its words into the reply
    (Gemma 3 270M itemized a meal as {"type": ["item"]}); the JSON Schema
    only for what a shape cannot say."""
    if schema is None:
        return 'Reply with a JSON object.'
    # The reply the model is steered to (x-decode), which the checked
    # schema also accepts.
    schema = decoding_schema(schema)
    shape = schema_shape(schema)
    if shape is not None:
        return 'Reply with a JSON object of this shape: ' + shape
    return ('Reply with a JSON object matching this JSON schema: '
            + json.dumps(schema, separators=(',', ':'), ensure_ascii=False))


# A subschema may carry "x-decode": a narrower schema that a model decoding
# under constraint is held to, while the reply is checked against the
# subschema itself.  So a process can steer a small model onto what it can
# do well (quote the user's message rather than restate it) without
# refusing the free reply a larger model, or a script, gives.
DECODE = 'x-decode'


def decoding_schema(schema: Any) -> Any:
    """The schema to decode under: every subschema with an x-decode
    replaced by it (the checked schema is `schema` itself)."""
    if isinstance(schema, list):
        return [decoding_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get(DECODE), dict):
        return decoding_schema(schema[DECODE])
    return {k: decoding_schema(v) for k, v in schema.items()}


# The keywords a shape renders (annotations are left out); a schema with any
# other (a pattern, a $ref, bounds) is shown as the JSON Schema it is.
_SHAPE_KEYS = {'type', 'properties', 'required', 'additionalProperties', 'items', 'enum',
               'const', 'anyOf', 'oneOf', 'minProperties', 'minItems', 'format',
               'maxItems', 'examples', 'title', 'description', '$schema', DECODE}
# String formats a shape can name, with their form.
_FORMATS = {'date-time': 'date-time (YYYY-MM-DDThh:mm:ss+hh:mm)',
            'date': 'date (YYYY-MM-DD)', 'time': 'time (hh:mm:ss+hh:mm)'}
# Type names, as TypeScript writes them: a small model shown "..." for a
# text wrote "...", and shown <text> wrote "<text> | </text>".
_PLACEHOLDER = {'string': 'string', 'number': 'number', 'integer': 'integer',
                'boolean': 'true | false', 'null': 'null'}


def schema_shape(schema: Any) -> Optional[str]:
    """The reply a schema asks for, written as JSON with type names for
    values and `a | b` for a choice: {"action": "answer" | "confer", "text":
    string}.  None when the schema says more than a shape can."""
    try:
        return _shape(schema, 0)
    except ValueError:
        return None


def _shape(schema: Any, depth: int) -> str:
    if not isinstance(schema, dict) or depth > 8 or set(schema) - _SHAPE_KEYS:
        raise ValueError('no shape')
    dump = lambda v: json.dumps(v, ensure_ascii=False)
    if 'const' in schema:
        return dump(schema['const'])
    if 'enum' in schema:
        if not schema['enum']:
            raise ValueError('no shape')
        return ' | '.join(dump(v) for v in schema['enum'])
    union = schema.get('anyOf') or schema.get('oneOf')
    if union is not None:
        if not isinstance(union, list) or not union or len(schema) > 1:
            raise ValueError('no shape')
        return ' or '.join(_shape(s, depth + 1) for s in union)
    kind = schema.get('type')
    if kind == 'object' or (kind is None and ('properties' in schema or
                                              'additionalProperties' in schema)):
        properties = schema.get('properties') or {}
        required = schema.get('required') or []
        extra = schema.get('additionalProperties')
        if set(required) - set(properties) or not (properties or isinstance(extra, dict)):
            raise ValueError('no shape')       # fields of any kind: the JSON Schema says so
        fields = ['%s: %s' % (dump(name), _shape(sub, depth + 1))
                  for name, sub in properties.items()
                  if name in required]
        optional = ['%s: %s' % (dump(name), _shape(sub, depth + 1))
                    for name, sub in properties.items() if name not in required]
        if isinstance(extra, dict):
            fields.append('string: %s, ...' % _shape(extra, depth + 1))
        elif optional or extra not in (None, False, True):
            raise ValueError('no shape')       # optional fields: the JSON Schema says which
        return '{' + ', '.join(fields) + '}'
    if kind == 'array':
        items = schema.get('items')
        if not isinstance(items, dict):
            raise ValueError('no shape')
        return '[%s, ...]' % _shape(items, depth + 1)
    if 'format' in schema:
        if kind != 'string' or schema['format'] not in _FORMATS:
            raise ValueError('no shape')
        examples = schema.get('examples')
        if isinstance(examples, list) and examples and isinstance(examples[0], str):
            return '%s, like %s' % (_FORMATS[schema['format']], dump(examples[0]))
        return _FORMATS[schema['format']]
    if isinstance(kind, str) and kind in _PLACEHOLDER:
        return _PLACEHOLDER[kind]
    raise ValueError('no shape')


def user_prompt(prompt: str, schema: Optional[dict]) -> str:
    return prompt.rstrip() + '\n\n' + schema_paragraph(schema)


def _reject_constant(name: str):
    raise ValueError('%s is not allowed in JSON' % name)


def _bounded_int(text: str) -> int:
    from ...vm import limits
    from ...vm.values import OstError
    try:
        return limits.int_from_digits(text)
    except OstError:
        raise ValueError('the number %s is too large' % _short(text)) from None


def _finite(text: str) -> float:
    value = float(text)
    if value in (float('inf'), float('-inf')):
        raise ValueError('the number %s is too large' % _short(text))
    return value


def _short(text: str) -> str:
    text = ' '.join(str(text).split())
    return text if len(text) <= MAX_PROBLEM else text[:MAX_PROBLEM - 3] + '...'


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return 'an array'
    if isinstance(value, str):
        return 'a string'
    if isinstance(value, bool):
        return 'a boolean'
    if isinstance(value, (int, float)):
        return 'a number'
    return 'null'


def check_reply(raw: str, schema: Optional[dict]) -> Tuple[Optional[dict], Optional[str]]:
    """(the parsed object, None), or (None, the problem as a sentence that
    follows "Your reply ").

    A reply wrapped in one Markdown code fence is accepted: small models add
    one out of habit, and the object inside is still exactly what was asked.
    """
    text = (raw or '').strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, 'was empty'
    if len(text) > MAX_REPLY:
        return None, 'was %d characters long, more than the %d allowed' % (len(text), MAX_REPLY)
    try:
        # strict=False: a raw line break inside a string is taken as one;
        # llama-cpp-python's schema grammars (and so its server) allow them.
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite,
                           parse_int=_bounded_int, strict=False)
    except ValueError as e:
        return None, 'was not valid JSON: %s' % _short(str(e))
    except RecursionError:
        return None, 'was nested too deeply'
    if not isinstance(value, dict):
        return None, 'was %s, not a JSON object' % _kind(value)
    if _depth(value) > MAX_DEPTH:
        return None, 'was nested more than %d levels deep' % MAX_DEPTH
    if schema is not None:
        error = best_match(jsonschema.validators.validator_for(schema)(schema).iter_errors(value))
        if error is not None:
            where = ''.join('[%d]' % p if isinstance(p, int) else '.' + str(p)
                            for p in error.absolute_path)
            at = ' (at %s)' % where.lstrip('.') if where else ''
            return None, 'does not match the schema: %s%s' % (_short(error.message), at)
    return value, None


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (found without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def describe(problem: str, truncated: bool, limit: int) -> str:
    """The problem as told to the model: "Your reply ..."."""
    text = 'Your reply ' + problem
    if truncated:
        text += ' (it was cut off at the limit of %d tokens: keep it shorter)' % limit
    return text


def reask_message(described: str) -> str:
    """The user message that follows the model's bad reply in the conversation."""
    return described + '. Reply again with only the corrected JSON object.'
