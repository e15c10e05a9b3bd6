"""A probe, not a test: do Gemma 3 270M's token probabilities tell a food
or drink from anything else, where its decoded answers (classify.ost) do
not?  For each phrase of classify.ost's list, the log-probability of
"yes" (or "Yes") against "no" (or "No") as the first token of the model's
turn, in three phrasings; prints the area under the ROC curve of that
score (1.0: every food above every other phrase; 0.5: chance) and the
phrases in its order.  Usage: python evals/probes/classify_logprobs.py
[MODEL.gguf] (default: the embedded model's file).
"""
import math
import os
import sys

import numpy as np
from llama_cpp import Llama

MODEL = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser(
    '~/.cache/ostinato/gemma-3-270m-q4_k_m.gguf')
FOODS = ['eggs benny', 'mimosa', 'popcorn', 'cereal', 'red bull', 'coffee', 'turkey wrap', 'chips',
         'steak', 'salmon', 'rice', 'spring roll']
OTHERS = ['girls', 'bluestone', 'ugh im', 'bad', 'class', 'both', 'dinner time', 'jen', 'office',
          'walk', 'mom', 'wife', 'yoga', 'long day', 'forgot to log', 'rowing machine', 'kids', 'bus']
FORMS = ['Is "{p}" a food or drink? Answer yes or no.',
         'Is "{p}" something you can eat or drink? Answer yes or no.',
         'Question: can you eat or drink "{p}"? Answer yes or no.']

model = Llama(MODEL, n_ctx=512, verbose=False, logits_all=True)
first = {w: model.tokenize(w.encode(), add_bos=False)[0] for w in ('yes', 'Yes', 'no', 'No')}


def score(question):
    # Gemma's chat turn, as the embedded backend sends it.
    prompt = '<start_of_turn>user\n%s<end_of_turn>\n<start_of_turn>model\n' % question
    model.reset()
    model.eval(model.tokenize(prompt.encode(), add_bos=True, special=True))
    logits = model.scores[model.n_tokens - 1]
    shifted = logits - logits.max()
    logp = shifted - math.log(np.exp(shifted).sum())
    return float(np.logaddexp(logp[first['yes']], logp[first['Yes']])
                 - np.logaddexp(logp[first['no']], logp[first['No']]))


for form in FORMS:
    s = {p: score(form.format(p=p)) for p in FOODS + OTHERS}
    auc = sum((s[a] > s[b]) + 0.5 * (s[a] == s[b]) for a in FOODS for b in OTHERS) / (
        len(FOODS) * len(OTHERS))
    print('%s  AUC %.2f' % (form, auc))
    print('   ' + ', '.join('%s %.1f' % (p, s[p]) for p in sorted(s, key=lambda p: -s[p])))
