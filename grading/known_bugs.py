"""Classic mistakes, written into one question of each exercise's solution.

Each entry is ``(question, description, [(text in the solution, buggy text), ...])``, optionally
followed by a piece of the feedback the bug must get (its hint), or by ``'mistake:<id>'``: the
bug is mistake ``<id>`` of the catalogue (``mha/course/mistakes/exNN.py``), whose whole hint it
must get, in English and in Chinese (``tests/test_mistakes_catalogue.py``). ``python -m grading.selfcheck``
and the test suite check that a solution with the bug loses exactly the points of ``question``,
keeps every other question's points, and (if given) that the feedback says that text.
Add one here whenever a student finds a new way to be wrong.
"""

BUGS = {
    'ex01_self_attention': [
        ('q1', 'scales with floor division //', [
            ('/ math.sqrt(d_k)',
             '// math.sqrt(d_k)'),
        ], 'mistake:floor_scale'),
        ('q1', 'forgets the 1/sqrt(d_k) scaling', [
            ('return q @ k.transpose(-2, -1) / math.sqrt(d_k)',
             'return q @ k.transpose(-2, -1)'),
        ], 'mistake:no_scale'),
        ('q1', 'divides by d_k', [
            ('/ math.sqrt(d_k)',
             '/ d_k'),
        ], 'mistake:divided_by_d_k'),
        ('q1', "hard-codes the running example's sqrt(8)", [
            ('/ math.sqrt(d_k)',
             '/ math.sqrt(8)'),
        ], 'mistake:fixed_scale'),
        ('q1', 'k @ q^T: rows and columns swapped', [
            ('return q @ k.transpose(-2, -1) / math.sqrt(d_k)',
             'return k @ q.transpose(-2, -1) / math.sqrt(d_k)'),
        ], 'mistake:swapped'),
        ('q1', 'k.T on a batched tensor', [
            ('return q @ k.transpose(-2, -1) / math.sqrt(d_k)',
             'return q @ k.T / math.sqrt(d_k)'),
        ], 'mistake:batch_transpose'),
        ('q2', 'softmax over the wrong axis', [
            ('exps / exps.sum(dim=-1, keepdim=True)',
             'exps / exps.sum(dim=0, keepdim=True)'),
        ], 'mistake:softmax_axis'),
        ('q2', 'no max subtraction (overflow to nan)', [
            ('shifted = scores - scores.amax(dim=-1, keepdim=True)',
             'shifted = scores'),
        ], 'mistake:overflow'),
        ('q2', 'subtracts the maximum of the whole tensor', [
            ('shifted = scores - scores.amax(dim=-1, keepdim=True)',
             'shifted = scores - scores.max()'),
        ], 'mistake:global_max'),
        ('q2', 'forgets to normalise', [
            ('return exps / exps.sum(dim=-1, keepdim=True)',
             'return exps'),
        ], 'mistake:not_normalised'),
        ('q3', 'element-wise weights * v', [
            ('return weights @ v, weights',
             'return weights * v, weights'),
        ], 'mistake:elementwise'),
        ('q3', 'unscaled scores, written inline', [
            ('weights = softmax(attention_scores(q, k))',
             'weights = softmax(q @ k.transpose(-2, -1))'),
        ], 'mistake:no_scale'),
        ('q3', 'softmax over the queries', [
            ('weights = softmax(attention_scores(q, k))',
             'weights = torch.softmax(attention_scores(q, k), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q3', 'averages with the raw scores', [
            ('return weights @ v, weights',
             'return attention_scores(q, k) @ v, weights'),
        ], 'mistake:no_softmax'),
        ('q3', 'transposed weights', [
            ('return weights @ v, weights',
             'return weights.transpose(-2, -1) @ v, weights'),
        ], 'mistake:weights_transposed'),
        ('q4', 'forgets the projections', [
            ('return attention(x @ W_q, x @ W_k, x @ W_v)',
             'return attention(x, x, x)'),
        ], 'mistake:no_projection'),
        ('q4', 'transposes the projections', [
            ('return attention(x @ W_q, x @ W_k, x @ W_v)',
             'return attention(x @ W_q.T, x @ W_k.T, x @ W_v.T)'),
        ], 'mistake:transposed_projection'),
        ('q5', 'computes the scores in float16 (overflow, then nan)', [
            ('q, k, v = q.float(), k.float(), v.float()  # float32: room for the large dot products',
             'pass'),
        ], 'mistake:overflow16'),
        ('q5', 'scales q and k by d**0.25 first, then computes in float16', [
            ('q, k, v = q.float(), k.float(), v.float()  # float32: room for the large dot products',
             'q, k = q / q.shape[-1] ** 0.25, k / k.shape[-1] ** 0.25'),
            ('/ math.sqrt(q.shape[-1]), dim=-1)',
             ', dim=-1)'),
        ], 'mistake:prescaled'),
        ('q5', 'returns float32', [
            ('return (weights @ v).half()',
             'return weights @ v'),
        ], 'return float16 like the inputs'),
        ('q5', 'forgets the scale', [
            ('/ math.sqrt(q.shape[-1]), dim=-1)',
             ', dim=-1)'),
        ], 'mistake:no_scale'),
        ('q5', 'softmax over the queries', [
            ('/ math.sqrt(q.shape[-1]), dim=-1)',
             '/ math.sqrt(q.shape[-1]), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q6', 'the large-t limit sums the values', [
            ('uniform = v.mean(dim=-2, keepdim=True)',
             'uniform = v.sum(dim=-2, keepdim=True)'),
        ], 'mistake:summed'),
        ('q6', 'the two limits swapped', [
            ('return uniform, one_hot @ v',
             'return one_hot @ v, uniform'),
        ], 'mistake:swapped_limits'),
        ('q6', 'the best query of each key', [
            ('best = (q @ k.transpose(-2, -1)).argmax(dim=-1)',
             'best = (q @ k.transpose(-2, -1)).argmax(dim=-2)'),
        ], 'mistake:argmax_axis'),
        ('q6', 'predicts the limits the wrong way round', [
            ('prediction = {"t_large": "b", "t_small": "c"}',
             'prediction = {"t_large": "c", "t_small": "b"}'),
        ], 'disagrees with the limits'),
        ('q7', 'the maximum of the whole tensor kept', [
            ('exps = torch.exp(scores - scores.amax(dim=-1, keepdim=True))',
             'exps = torch.exp(scores - scores.max())'),
        ], 'mistake:global_max'),
        ('q7', 'the scale taken from the values', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])',
             'scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])'),
        ], 'mistake:value_width'),
        ('q7', 'an example whose every row holds the largest score', [
            ('torch.tensor([[200.0], [1.0]])',
             'torch.tensor([[200.0], [-200.0]])'),
        ], 'returns no nan on it'),
    ],
    'ex02_multi_head': [
        ('q1', 'reshapes straight to [B, H, L, d]', [
            ('return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)',
             'return x.view(B, num_heads, L, D // num_heads)'),
        ]),
        ('q1', 'float division D / H', [
            ('return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)',
             'return x.view(B, L, num_heads, D / num_heads).transpose(1, 2)'),
        ], 'a shape must be whole numbers'),
        ('q1', 'interleaved columns per head', [
            ('return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)',
             'return x.view(B, L, D // num_heads, num_heads).permute(0, 3, 1, 2)'),
        ]),
        ('q2', 'reshape without transposing back', [
            ('return x.transpose(1, 2).reshape(B, L, H * d)',
             'return x.reshape(B, L, H * d)'),
        ]),
        ('q2', 'view on a non-contiguous tensor', [
            ('return x.transpose(1, 2).reshape(B, L, H * d)',
             'return x.transpose(1, 2).view(B, L, H * d)'),
        ]),
        ('q3', 'scales by sqrt(d_model)', [
            ('/ math.sqrt(self.head_dim)',
             '/ math.sqrt(self.head_dim * self.num_heads)'),
        ]),
        ('q3', 'forgets the output projection', [
            ('return self.o_proj(out), weights',
             'return out, weights'),
        ], 'apply the output projection'),
        ('q3', 'softmax over the queries', [
            ('weights = torch.softmax(scores, dim=-1)              # [B, H, L, S]',
             'weights = torch.softmax(scores, dim=-2)              # [B, H, L, S]'),
        ], 'mistake:softmax_axis'),
        ('q3', "keys and values split with the queries' length L", [
            ('k = split_heads(self.k_proj(key), self.num_heads)    # [B, H, S, d]',
             'k = self.k_proj(key).view(query.shape[0], query.shape[1], self.num_heads, self.head_dim).transpose(1, 2)'),
            ('v = split_heads(self.v_proj(value), self.num_heads)  # [B, H, S, d]',
             'v = self.v_proj(value).view(query.shape[0], query.shape[1], self.num_heads, self.head_dim).transpose(1, 2)'),
        ], 'their own length S'),
        ('q4', 'forgets the biases', [
            ('return 4 * (d_model * d_model + d_model)',
             'return 4 * d_model * d_model'),
        ], 'count the biases too'),
        ('q4', 'a D x D projection per head', [
            ('return 4 * (d_model * d_model + d_model)',
             'return 3 * num_heads * (d_model * d_model + d_model) + d_model * d_model + d_model'),
        ], 'your count changes with the number of heads'),
        ('q5', 'believes heads add parameters', [
            ('heads_answer = "b"',
             'heads_answer = "a"'),
        ], 'is not right'),
        ('q6', 'scales by sqrt(d_v)', [
            ('math.sqrt(q.shape[-1])',
             'math.sqrt(v.shape[-1])'),
        ], 'not d_v'),
        ('q6', 'scales by sqrt(D / H), as for square projections', [
            ('math.sqrt(q.shape[-1])',
             'math.sqrt(x.shape[-1] / num_heads)'),
        ], 'mistake:d_model_over_heads'),
        ('q6', 'splits the values with d_k', [
            ('v = split_heads(x @ W_v, num_heads)                # [B, H, L, d_v]',
             'v = (x @ W_v).view(x.shape[0], x.shape[1], num_heads, q.shape[-1]).transpose(1, 2)'),
        ], 'their own width d_v'),
        ('q3', 'forgets the 1/sqrt(d_k) scale', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)',
             'scores = q @ k.transpose(-2, -1)'),
        ], 'mistake:no_scale'),
        ('q6', 'forgets the 1/sqrt(d_k) scale', [
            ('/ math.sqrt(q.shape[-1]), dim=-1)',
             ', dim=-1)'),
        ], 'mistake:no_scale'),
        ('q6', 'softmax over the queries', [
            ('/ math.sqrt(q.shape[-1]), dim=-1)',
             '/ math.sqrt(q.shape[-1]), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q7', 'head terms without the 1/sqrt(d) scale', [
            ('heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v',
             'heads = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v'),
        ], 'mistake:no_scale'),
        ('q7', 'head terms with the softmax over the queries', [
            ('heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v',
             'heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-2) @ v'),
        ], 'mistake:softmax_axis'),
        ('q7', 'W_o transposed: the heads meet its columns', [
            ('rows = W_o.reshape(H, d, D)',
             'rows = W_o.T.reshape(H, d, D)'),
        ], 'mistake:w_o_transposed'),
        ('q7', 'the output shared equally among the heads', [
            ('return heads @ rows',
             'return (heads.transpose(1, 2).reshape(x.shape) @ W_o)[:, None].expand(-1, H, -1, -1) / H'),
        ], 'mistake:equal_share'),
        ('q8', 'zeroes rows of W_q (input features) instead of the head\'s columns', [
            ('silenced[:, head * d:(head + 1) * d] = 0',
             'silenced[head * d:(head + 1) * d] = 0'),
        ], 'mistake:wrong_block'),
        ('q8', 'predicts that the silenced head attends to nothing', [
            ('prediction = {"this_head": "b", "other_heads": "a"}',
             'prediction = {"this_head": "c", "other_heads": "a"}'),
        ], 'disagrees with the measurement'),
        # issue 21 item 10: a wrapper of the course's own reference is refused by what it calls
        ('q4', 'counts the parameters of a layer it builds (mha.MultiHeadAttention)', [
            ('return 4 * (d_model * d_model + d_model)',
             'return sum(p.numel() for p in __import__("mha").MultiHeadAttention(d_model, num_heads).parameters())'),
        ], 'uses `mha.MultiHeadAttention` (your code called'),
    ],
    'ex03_masking': [
        ('q1', 'inverted mask (True = blocked)', [
            ('return torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)',
             'return ~torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)'),
        ], 'mistake:inverted_mask'),
        ('q1', 'top-left alignment when L < S', [
            ('tril(diagonal=S - L)',
             'tril(diagonal=0)'),
        ], 'mistake:misaligned_mask'),
        ('q1', 'leaks the next (future) token', [
            ('tril(diagonal=S - L)',
             'tril(diagonal=S - L + 1)'),
        ], 'a future token'),
        ('q2', 'off by one (<=)', [
            ('positions[None, :] < lengths[:, None]',
             'positions[None, :] <= lengths[:, None]'),
        ]),
        ('q2', 'shape [B, S] without the singleton axes', [
            ('return (positions[None, :] < lengths[:, None])[:, None, None, :]',
             'return positions[None, :] < lengths[:, None]'),
        ]),
        ('q3', 'inverted fill: masked_fill(mask, ...)', [
            ('scores.masked_fill(~mask, float("-inf"))',
             'scores.masked_fill(mask, float("-inf"))'),
        ], 'mistake:inverted_mask'),
        ('q3', 'fills blocked scores with 0', [
            ('scores.masked_fill(~mask, float("-inf"))',
             'scores.masked_fill(~mask, 0.0)'),
        ]),
        ('q3', 'nan for fully masked rows', [
            ('weights = torch.nan_to_num(weights, nan=0.0)',
             'weights = weights'),
        ], 'replace those nan weights by 0'),
        ('q3', 'multiplies the nan rows by mask.any (nan * 0 = nan)', [
            ('weights = torch.nan_to_num(weights, nan=0.0)',
             'weights = weights * (mask.any(-1, keepdim=True) if mask is not None else 1)'),
        ], 'nan * 0 = nan'),
        ('q4', 'combines with | instead of &', [
            ('return causal_mask(L) & padding_mask(lengths, L)',
             'return causal_mask(L) | padding_mask(lengths, L)'),
        ], 'combine the masks with &'),
        ('q5', 'causal only: sees the other documents', [
            ('return (same_doc & past)[:, None]',
             'return past.expand(doc_ids.shape[0], 1, L, L)'),
        ], "a key must also belong to the query's document"),
        ('q5', 'same document only: sees the future', [
            ('return (same_doc & past)[:, None]',
             'return same_doc[:, None]'),
        ], 'must be causal as well'),
        ('q3', 'forgets the 1/sqrt(d_k) scale', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])',
             'scores = q @ k.transpose(-2, -1)'),
        ], 'mistake:no_scale'),
        ('q3', 'softmax over the queries', [
            ('weights = torch.softmax(scores, dim=-1)\n    weights = torch.nan_to_num',
             'weights = torch.softmax(scores, dim=-2)\n    weights = torch.nan_to_num'),
        ], 'mistake:softmax_axis'),
        ('q4', 'inverted mask', [
            ('return causal_mask(L) & padding_mask(lengths, L)',
             'return ~(causal_mask(L) & padding_mask(lengths, L))'),
        ], 'mistake:inverted_mask'),
        ('q6', 'a window of window + 1 positions', [
            ('return (key <= position) & (key > position - window)',
             'return (key <= position) & (key >= position - window)'),
        ], 'mistake:too_wide'),
        ('q6', 'queries at positions 0 .. L - 1', [
            ('position = torch.arange(S - L, S)[:, None]',
             'position = torch.arange(L)[:, None]'),
        ], 'mistake:top_left'),
        ('q6', 'the window mask inverted', [
            ('return (key <= position) & (key > position - window)',
             'return (key > position) | (key <= position - window)'),
        ], 'mistake:inverted_mask'),
    ],
    'ex04_cross_attention': [
        ('q1', 'queries from the memory', [
            ('q = x @ W_q',
             'q = memory @ W_q'),
        ]),
        ('q1', 'forgets the scaling', [
            ('weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)',
             'weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)'),
        ], 'the scores are not scaled'),
        ('q1', 'keys and values from x (self-attention)', [
            ('k = memory @ W_k',
             'k = x @ W_k'),
            ('v = memory @ W_v',
             'v = x @ W_v'),
        ]),
        ('q2', "keys split with the queries' length L", [
            ('k = split_heads(self.k_proj(memory), self.num_heads)',
             'k = self.k_proj(memory).view(B, L, self.num_heads, self.head_dim).transpose(1, 2)'),
        ]),
        ('q2', 'keys and values from x (self-attention), as in question 1', [
            ('k = split_heads(self.k_proj(memory), self.num_heads)',
             'k = split_heads(self.k_proj(x), self.num_heads)'),
            ('v = split_heads(self.v_proj(memory), self.num_heads)',
             'v = split_heads(self.v_proj(x), self.num_heads)'),
        ], 'mistake:keys_from_x'),
        ('q2', 'ignores the memory mask', [
            ('            scores = scores.masked_fill(~memory_mask, float("-inf"))\n        weights',
             '            pass\n        weights'),
        ], 'mistake:no_mask'),
        ('q2', 'inverted memory mask', [
            ('            scores = scores.masked_fill(~memory_mask, float("-inf"))\n        weights',
             '            scores = scores.masked_fill(memory_mask, float("-inf"))\n        weights'),
        ], 'mistake:inverted_mask'),
        ('q3', 'argmax over the queries', [
            ('return weights.argmax(dim=-1)',
             'return weights.argmax(dim=-2)'),
        ]),
        ('q4', 'scales each step by sqrt(D), the model width', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])     # [B, H, 1, S]',
             'scores = q @ k.transpose(-2, -1) / math.sqrt(x_t.shape[-1])     # [B, H, 1, S]'),
        ], 'mistake:d_model_scale'),
        ('q4', 'ignores the memory mask at each step', [
            ('        scores = scores.masked_fill(~memory_mask, float("-inf"))\n    return merge_heads(',
             '        pass\n    return merge_heads('),
        ], 'mistake:no_mask'),
        ('q4', 'caches the memory projections without splitting the heads', [
            ('return split_heads(memory @ W_k, num_heads), split_heads(memory @ W_v, num_heads)',
             'return memory @ W_k, memory @ W_v'),
        ], 'split the keys into heads'),
        ('q2', 'forgets the 1/sqrt(d_k) scale', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # [B, H, L, S]',
             'scores = q @ k.transpose(-2, -1)  # [B, H, L, S]'),
        ], 'mistake:no_scale'),
        ('q2', 'softmax over the queries', [
            ('        weights = torch.softmax(scores, dim=-1)\n        return self.o_proj',
             '        weights = torch.softmax(scores, dim=-2)\n        return self.o_proj'),
        ], 'mistake:softmax_axis'),
        ('q4', 'inverted memory mask at each step', [
            ('    if memory_mask is not None:\n        scores = scores.masked_fill(~memory_mask, float("-inf"))\n    return merge_heads',
             '    if memory_mask is not None:\n        scores = scores.masked_fill(memory_mask, float("-inf"))\n    return merge_heads'),
        ], 'mistake:inverted_mask'),
        ('q4', 'forgets the 1/sqrt(d_k) scale at each step', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])     # [B, H, 1, S]',
             'scores = q @ k.transpose(-2, -1)     # [B, H, 1, S]'),
        ], 'mistake:no_scale'),
        ('q4', 'softmax over the queries at each step', [
            ('return merge_heads(torch.softmax(scores, dim=-1) @ v) @ W_o',
             'return merge_heads(torch.softmax(scores, dim=-2) @ v) @ W_o'),
        ], 'mistake:softmax_axis'),
        ('q5', 'padding matches padding', [
            ('return (same & real)[:, None]',
             'return same[:, None]'),
        ], 'mistake:padding_matched'),
        ('q5', 'the pair mask inverted', [
            ('return (same & real)[:, None]',
             'return ~(same & real)[:, None]'),
        ], 'mistake:inverted_mask'),
        ('q5', 'keys as rows, queries as columns', [
            ('return (same & real)[:, None]',
             'return (same & real).transpose(-2, -1)[:, None]'),
        ], 'mistake:transposed'),
    ],
    'ex05_transformer_block': [
        ('q1', 'no ReLU', [
            ('return self.contract(torch.relu(self.expand(x)))',
             'return self.contract(self.expand(x))'),
        ]),
        ('q2', 'residual missing', [
            ('return norm(x + sublayer(x))',
             'return norm(sublayer(x))'),
        ]),
        ('q3', 'Post-LN instead of Pre-LN', [
            ('return x + sublayer(norm(x))',
             'return norm(x + sublayer(x))'),
        ]),
        ('q4', "the chapter's self_attn(x)[0]: batch element 0", [
            ('h = post_ln(x, lambda t: self_attn(t, mask), norm1)',
             'h = post_ln(x, lambda t: self_attn(t, mask)[0], norm1)'),
        ], 'mistake:first_sequence'),
        ('q5', 'sin and cos concatenated, not interleaved', [
            ('    pe = torch.zeros(L, d)\n    pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)\n',
             '    pe = torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1)\n'),
        ], 'mistake:concatenated'),
        ('q5', 'the exponent 2 * (2i) / d', [
            ('angle = position / 10000 ** (two_i / d)',
             'angle = position / 10000 ** (2 * two_i / d)'),
        ], 'mistake:exponent_doubled'),
        ('q6', 'a running count of the real tokens, not minus 1', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)   # [B, L]: 0 at the first real token',
             'positions = mask.long().cumsum(dim=1)'),
        ], 'mistake:off_by_one'),
        ('q4', 'second residual adds x instead of h', [
            ('return post_ln(h, ffn, norm2)',
             'return norm2(x + ffn(h))'),
        ]),
        ('q6', 'positions counted from column 0', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)   # [B, L]: 0 at the first real token',
             'positions = torch.arange(L).expand(B, L)'),
        ], 'count the positions from the first real token'),
        ('q6', 'encodes the padding too', [
            ('return x + pe * mask[..., None]',
             'return x + pe'),
        ], 'the padding positions must stay exactly as they are'),
        ('q5', 'sin and cos swapped', [
            ('pe[:, 0::2] = torch.sin(angle)',
             'pe[:, 0::2] = torch.cos(angle)'),
            ('pe[:, 1::2] = torch.cos(angle)',
             'pe[:, 1::2] = torch.sin(angle)'),
        ]),
        ('q7', 'the band leaves out distance w', [
            ('return (i[:, None] - i[None, :]).abs() <= w',
             'return (i[:, None] - i[None, :]).abs() < w'),
        ], 'mistake:strict'),
        ('q7', 'the band mask inverted', [
            ('return (i[:, None] - i[None, :]).abs() <= w',
             'return (i[:, None] - i[None, :]).abs() > w'),
        ], 'mistake:inverted'),
        ('q7', 'moves the token in the first row only', [
            ('moved[:, position] += 1.0',
             'moved[0, position] += 1.0'),
        ], 'mistake:one_row'),
        ('q7', 'moves the token in the caller\'s x (in place)', [
            ('moved = x.clone()\n    moved[:, position] += 1.0\n    return (model(moved) - model(x))',
             'before = model(x)\n    x[:, position] += 1.0\n    return (model(x) - before)'),
        ], 'mistake:in_place'),
        ('q7', 'forgets that the reach stops at the start of the sentence', [
            ('prediction = {1: 3, 3: 6}',
             'prediction = {1: 3, 3: 7}'),
        ], 'disagrees with the measurement'),
        ('q8', 'keeps the inputs at the padding', [
            ('out = real.new_zeros(*mask.shape, real.shape[-1])',
             'out = x.clone()'),
        ], 'mistake:padding_kept'),
        ('q8', 'runs ffn on every position, then picks the real ones', [
            ('real = ffn(x[mask])',
             'real = ffn(x)[mask]'),
        ], 'it must receive only the 8 real tokens'),
        ('q8', 'one call per row', [
            ('real = ffn(x[mask])',
             'real = torch.cat([ffn(row[keep]) for row, keep in zip(x, mask)])'),
        ], 'called ffn 3 times'),
        # issue 21 item 10: wrappers of the course's own references, refused by what they call
        ('q1', 'calls mha.FeedForward.forward', [
            ('return self.contract(torch.relu(self.expand(x)))',
             'self.dropout = nn.Identity()\n        return mha.FeedForward.forward(self, x)'),
        ], 'uses `mha.FeedForward`'),
        ('q2', 'lets mha.EncoderLayer.forward wire a stand-in layer', [
            ('return norm(x + sublayer(x))',
             'parts = __import__("types").SimpleNamespace(norm_first=False, dropout=lambda t: t, self_attn=lambda t, mask, need_weights: (sublayer(t), None), norm1=norm, ff=torch.zeros_like, norm2=lambda t: t)\n    return mha.EncoderLayer.forward(parts, x)[0]'),
        ], 'uses `mha.EncoderLayer`'),
        ('q4', 'lets mha.EncoderLayer.forward wire the given parts', [
            ('h = post_ln(x, lambda t: self_attn(t, mask), norm1)\n    return post_ln(h, ffn, norm2)',
             'parts = __import__("types").SimpleNamespace(norm_first=False, dropout=lambda t: t, self_attn=lambda t, mask, need_weights: (self_attn(t, mask), None), norm1=norm1, ff=ffn, norm2=norm2)\n    return mha.EncoderLayer.forward(parts, x, mask)[0]'),
        ], 'uses `mha.EncoderLayer`'),
        ('q6', 'takes the left-padded positions from mha.GPT', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)   # [B, L]: 0 at the first real token',
             'positions = mha.GPT._positions(torch.arange(L), mask)'),
        ], 'uses `mha.gpt` (your code called'),
    ],
    'ex06_norms': [
        ('q1', 'unbiased variance', [
            ('var = x.var(dim=-1, keepdim=True, unbiased=False)',
             'var = x.var(dim=-1, keepdim=True)'),
        ]),
        ('q1', 'statistics over the batch axis', [
            ('mean = x.mean(dim=-1, keepdim=True)',
             'mean = x.mean(dim=0, keepdim=True)'),
            ('var = x.var(dim=-1, keepdim=True, unbiased=False)',
             'var = x.var(dim=0, keepdim=True, unbiased=False)'),
        ]),
        ('q2', 'statistics over the batch axis only', [
            ('dims = tuple(range(x.dim() - 1))  # every axis but the features',
             'dims = (0,)'),
        ]),
        ('q3', 'evaluation mode uses the batch statistics', [
            ('mean, var = self.running_mean, self.running_var',
             'mean, var = x.mean(dim=dims), x.var(dim=dims, unbiased=False)'),
        ], 'use running_mean and running_var'),
        ('q3', 'running variance not corrected to unbiased', [
            ('self.momentum * var * n / (n - 1)',
             'self.momentum * var'),
        ], 'multiply the biased one by n / (n - 1)'),
        ('q3', 'no error for one value per feature in training', [
            ('            if n < 2:\n                raise ValueError(',
             '            if False:\n                raise ValueError('),
        ], 'should raise ValueError'),
        ('q4', 'statistics include the padding', [
            ('m = mask[..., None].to(x.dtype)                        # [B, L, 1]',
             'm = torch.ones_like(mask[..., None], dtype=x.dtype)'),
        ], 'the padding is in your statistics'),
        ('q4', 'padding outputs left non-zero', [
            ('return ((x - mean) / torch.sqrt(var + eps) * weight + bias) * m',
             'return (x - mean) / torch.sqrt(var + eps) * weight + bias'),
        ], 'must be exactly 0'),
        ('q5', 'True where the output did not change', [
            ('return (norm(changed_x) - norm(x)).abs().amax(dim=-1) > tol',
             'return (norm(changed_x) - norm(x)).abs().amax(dim=-1) <= tol'),
        ], 'mistake:inverted'),
        ('q5', 'signed difference: misses outputs that went down', [
            ('return (norm(changed_x) - norm(x)).abs().amax(dim=-1) > tol',
             'return (norm(changed_x) - norm(x)).amax(dim=-1) > tol'),
        ], 'mistake:signed'),
        ('q5', 'predicts that scaling a token changes its LayerNorm output', [
            ('"layer_norm": {"token_shift": True, "token_scale": True,',
             '"layer_norm": {"token_shift": True, "token_scale": False,'),
        ], 'disagrees with the measurement'),
        ('q5', 'predicts that BatchNorm ignores a shift of one token', [
            ('"batch_norm_train": {"token_shift": False,',
             '"batch_norm_train": {"token_shift": True,'),
        ], 'disagrees with the measurement'),
        ('q6', 'groups of every G-th feature', [
            ('pieces = x.reshape(*x.shape[:-1], groups, D // groups)',
             'pieces = x.reshape(*x.shape[:-1], D // groups, groups).transpose(-2, -1)'),
            ('torch.sqrt(var + eps)).reshape(x.shape)',
             'torch.sqrt(var + eps)).transpose(-2, -1).reshape(x.shape)'),
        ], 'mistake:interleaved'),
        ('q6', 'unbiased variance', [
            ('var = pieces.var(dim=-1, keepdim=True, unbiased=False)',
             'var = pieces.var(dim=-1, keepdim=True)'),
        ], 'mistake:unbiased'),
        ('q6', 'statistics across the groups', [
            ('mean = pieces.mean(dim=-1, keepdim=True)',
             'mean = pieces.mean(dim=-2, keepdim=True)'),
            ('var = pieces.var(dim=-1, keepdim=True, unbiased=False)',
             'var = pieces.var(dim=-2, keepdim=True, unbiased=False)'),
        ], 'mistake:across_groups'),
        ('q6', 'no ValueError when D is not a multiple of groups', [
            ('if D % groups != 0:',
             'if False:'),
        ], 'should raise ValueError'),
        ('q7', 'scales the rows of W (input features)', [
            ('return W * scale, (b - running_mean) * scale + bias',
             'return W * scale[:, None], (b - running_mean) * scale + bias'),
        ], 'mistake:scaled_rows'),
        ('q7', 'keeps the running mean in the bias', [
            ('return W * scale, (b - running_mean) * scale + bias',
             'return W * scale, b * scale + bias'),
        ], 'mistake:mean_kept'),
        ('q7', 'no eps in the scale', [
            ('scale = weight / torch.sqrt(running_var + eps)',
             'scale = weight / torch.sqrt(running_var)'),
        ], 'mistake:no_eps'),
    ],
    'ex07_decoding': [
        ('q1', 'shifts left', [
            ('return torch.cat([bos, tgt[:, :-1]], dim=1)',
             'return torch.cat([tgt[:, 1:], bos], dim=1)'),
        ]),
        ('q1', 'keeps the last token (length T + 1)', [
            ('return torch.cat([bos, tgt[:, :-1]], dim=1)',
             'return torch.cat([bos, tgt], dim=1)'),
        ]),
        ('q2', 'feeds the unshifted targets', [
            ('logits = model(src, shift_right(tgt, bos_id), src_mask=src_mask)',
             'logits = model(src, tgt, src_mask=src_mask)'),
        ], 'the decoder must read the shifted targets'),
        ('q2', 'loss against the shifted input', [
            ('tgt.reshape(-1), ignore_index=pad_id)',
             'shift_right(tgt, bos_id).reshape(-1), ignore_index=pad_id)'),
        ], 'compare the logits with the targets tgt themselves'),
        ('q3', 'argmax of the first position', [
            ('next_token = logits[:, -1].argmax(dim=-1)',
             'next_token = logits[:, 0].argmax(dim=-1)'),
        ]),
        ('q3', 'finished rows keep generating', [
            ('next_token = next_token.masked_fill(finished, eos_id)',
             'pass'),
        ], 'append eos_id to it from then on'),
        ('q3', 'decodes the padded source without its mask', [
            ('memory = model.encode(src, src_mask)',
             'memory = model.encode(src)'),
            ('logits = model.decode(tokens, memory, src_mask)',
             'logits = model.decode(tokens, memory)'),
        ], 'the padding must be masked'),
        ('q3', 'one step too many: range(max_len)', [
            ('for _ in range(max_len - 1):',
             'for _ in range(max_len):'),
        ], 'max_len counts bos_id'),
        ('q3', 'does not feed the generated tokens back', [
            ('logits = model.decode(tokens, memory, src_mask)',
             'logits = model.decode(tokens[:, :1], memory, src_mask)'),
        ], 'the decoder must read the tokens generated so far'),
        ('q4', 'appends along the feature axis', [
            ('cache_k = torch.cat([cache_k, k_new], dim=-2)',
             'cache_k = torch.cat([cache_k, k_new], dim=-1)'),
            ('cache_v = torch.cat([cache_v, v_new], dim=-2)',
             'cache_v = torch.cat([cache_v, v_new], dim=-1)'),
        ]),
        ('q4', 'uses the built-in attention', [
            ('return weights @ cache_v, cache_k, cache_v',
             'return F.scaled_dot_product_attention(q_new, cache_k, cache_v), cache_k, cache_v'),
        ], 'uses `scaled_dot_product_attention`'),
        ('q5', 'ignores the source padding', [
            ('logits = model(src, shift_right(tgt, bos_id), src_mask)',
             'logits = model(src, shift_right(tgt, bos_id))'),
        ], 'pass its padding mask'),
        ('q5', 'counts the target padding', [
            ('return (picked * (tgt != pad_id)).sum(dim=-1)',
             'return picked.sum(dim=-1)'),
        ], 'leave its positions out of the sum'),
        ('q5', 'mean instead of sum', [
            ('return (picked * (tgt != pad_id)).sum(dim=-1)',
             'return (picked * (tgt != pad_id)).sum(dim=-1) / (tgt != pad_id).sum(dim=-1)'),
        ], 'not their mean'),
        ('q4', 'forgets the 1/sqrt(d_k) scale', [
            ('scores = q_new @ cache_k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])',
             'scores = q_new @ cache_k.transpose(-2, -1)'),
        ], 'mistake:no_scale'),
        ('q4', 'softmax over the queries', [
            ('    weights = torch.softmax(scores, dim=-1)\n    return weights @ cache_v',
             '    weights = torch.softmax(scores, dim=-2)\n    return weights @ cache_v'),
        ], 'mistake:softmax_axis'),
        ('q2', 'ignores the padding of the source (chapter 7 passes src_mask)', [
            ('logits = model(src, shift_right(tgt, bos_id), src_mask=src_mask)',
             'logits = model(src, shift_right(tgt, bos_id))'),
        ], 'the second source is padded'),
        ('q6', 'eos_id allowed at the last of the min_len steps', [
            ('if step <= min_len:',
             'if step < min_len:'),
        ], 'mistake:too_early'),
        ('q6', 'no minimum length at all', [
            ('logits[:, eos_id] = float("-inf")                    # too early to stop',
             'pass'),
        ], 'eos_id appears among its first min_len tokens'),
        ('q6', 'finished rows not kept at eos_id', [
            ('next_token = logits.argmax(dim=-1).masked_fill(finished, eos_id)',
             'next_token = logits.argmax(dim=-1)'),
        ]),
    ],
    'ex08_heads': [
        ('q1', '0 * log 0 gives nan', [
            ('return -torch.special.xlogy(weights, weights).sum(dim=-1)',
             'return -(weights * torch.log(weights)).sum(dim=-1)'),
        ]),
        ('q1', 'sums over the queries', [
            ('return -torch.special.xlogy(weights, weights).sum(dim=-1)',
             'return -torch.special.xlogy(weights, weights).sum(dim=-2)'),
        ]),
        ('q2', "zeroes every H-th column instead of the head's block", [
            ('heads = heads * keep[None, :, None, None]\n    return layer.o_proj(merge_heads(heads))',
             'merged = merge_heads(heads)\n    merged[..., head::H] = 0.0\n    return layer.o_proj(merged)'),
        ]),
        ('q3', 'repeat (tiles) instead of repeat_interleave', [
            ('return k.repeat_interleave(group, dim=1)',
             'return k.repeat(1, group, 1, 1)'),
        ], 'use repeat_interleave along dim 1'),
        ('q4', 'forgets the 1/sqrt(d_k) scale', [
            ('weights = torch.softmax(rows @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)',
             'weights = torch.softmax(rows @ k.transpose(-2, -1), dim=-1)'),
        ], 'mistake:no_scale'),
        ('q4', "softmax over the group's query rows", [
            ('weights = torch.softmax(rows @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)',
             'weights = torch.softmax(rows @ k.transpose(-2, -1) / math.sqrt(d), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q4', 'query heads tiled over the key/value heads (h % H_kv)', [
            ('rows = q.reshape(B, H_kv, group * L, d)',
             'rows = q.reshape(B, group, H_kv, L, d).transpose(1, 2).reshape(B, H_kv, group * L, d)'),
            ('return (weights @ v).reshape(B, H, L, v.shape[-1])',
             'return (weights @ v).reshape(B, H_kv, group, L, v.shape[-1]).transpose(1, 2).reshape(B, H, L, v.shape[-1])'),
        ], 'mistake:tiled_groups'),
        ('q5', 'switches off one query head only', [
            ('keep[kv_head * group:(kv_head + 1) * group] = 0.0',
             'keep[kv_head] = 0.0'),
        ], 'mistake:one_query_head'),
        ('q5', 'switches off every H_kv-th query head', [
            ('keep[kv_head * group:(kv_head + 1) * group] = 0.0',
             'keep[kv_head::H_kv] = 0.0'),
        ], 'mistake:tiled_group'),
        ('q6', 'predicts the entropy of the last row only, log 8', [
            ('predicted_entropy = 1.3256',
             'predicted_entropy = 2.0794'),
        ], 'disagrees with the measurement'),
        ('q6', 'uniform over every key, the causal mask forgotten', [
            ('allowed = torch.ones(L, L).tril()                          # query i sees keys 0..i',
             'allowed = torch.ones(L, L)'),
        ], 'the weights must respect the causal mask'),
        # issue 21 item 10: the course's own ablation, under another name, is refused by what it calls
        ('q2', 'mha.course.induction.ablate_heads, under another name, around the layer', [
            ('def ablate_head(layer, x, head):',
             'from mha.course.induction import ablate_heads as switch_off\n\n\ndef ablate_head(layer, x, head):'),
            ('    q = split_heads(layer.q_proj(x), H)\n    k = split_heads(layer.k_proj(x), H)\n    v = split_heads(layer.v_proj(x), H)\n    weights = torch.softmax(',
             '    whole = __import__("types").SimpleNamespace(num_layers=1, num_heads=H, attns=[layer])\n    with switch_off(whole, [(0, head)]):\n        return layer(x)[0]\n    q = split_heads(layer.q_proj(x), H)\n    k = split_heads(layer.k_proj(x), H)\n    v = split_heads(layer.v_proj(x), H)\n    weights = torch.softmax('),
        ], 'uses `ablate_heads` (your code called'),
        ('q5', 'mha.course.induction.ablate_heads, under another name, on the group\'s query heads', [
            ('def ablate_kv_head(layer, x, kv_head):',
             'from mha.course.induction import ablate_heads as switch_off\n\n\ndef ablate_kv_head(layer, x, kv_head):'),
            ('    group = H // H_kv\n    q = split_heads(layer.q_proj(x), H)',
             '    group = H // H_kv\n    whole = __import__("types").SimpleNamespace(num_layers=1, num_heads=H, attns=[layer])\n    with switch_off(whole, [(0, h) for h in range(kv_head * group, (kv_head + 1) * group)]):\n        return layer(x)[0]\n    q = split_heads(layer.q_proj(x), H)'),
        ], 'uses `ablate_heads` (your code called'),
    ],
    'ex09_debugging': [
        ('q1', 'leaves the floor division', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n    if mask is not None:\n        scores = scores.masked_fill(~mask',
             'scores = q @ k.transpose(-2, -1) // math.sqrt(d_k)\n    if mask is not None:\n        scores = scores.masked_fill(~mask'),
        ], 'mistake:floor_scale'),
        ('q1', 'leaves the softmax over the queries', [
            ('    weights = torch.softmax(scores, dim=-1)\n    weights = torch.nan_to_num(weights, nan=0.0)  # rows with every key blocked: 0/0 -> 0\n    return weights @ v, weights\n    # END',
             '    weights = torch.softmax(scores, dim=-2)\n    weights = torch.nan_to_num(weights, nan=0.0)  # rows with every key blocked: 0/0 -> 0\n    return weights @ v, weights\n    # END'),
        ], 'mistake:softmax_axis'),
        ('q1', 'leaves the inverted mask', [
            ('scores = scores.masked_fill(~mask, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)',
             'scores = scores.masked_fill(mask, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)'),
        ], 'mistake:inverted_mask'),
        ('q2', 'a test that checks only the shapes', [
            ('assert torch.allclose(weights, expected, atol=1e-6), "weights differ from softmax(q k^T / sqrt(d_k))"',
             'assert weights.shape == expected.shape'),
        ], 'passes on an attention that scales with //'),
        ('q3', 'a test with as many queries as keys that checks the column sums', [
            ('assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 3), atol=1e-6), "each query\'s weights must sum to 1"',
             'assert weights.shape[-1] == 5'),
        ], 'passes on an attention whose softmax runs over the queries'),
        ('q3', 'a test that asserts the sums over the wrong axis, with allclose', [
            ('assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 3), atol=1e-6), "each query\'s weights must sum to 1"',
             'assert torch.allclose(weights.sum(dim=-2), torch.ones(2, 5), atol=1e-6), "each key\'s weights must sum to 1"'),
        ], 'which axis sums to 1'),
        ('q4', 'a test that only checks the blocked keys of a mask blocking nothing', [
            ('mask = torch.ones(4, 4, dtype=torch.bool).tril()  # True = may attend',
             'mask = torch.ones(4, 4, dtype=torch.bool)  # True = may attend'),
            ('assert (weights[0][mask] > 0).all(), "an allowed key got no weight"',
             'pass'),
        ], 'passes on an attention that blocks the keys the mask allows'),
        ('q4', 'a test that fails on correct code (asks every weight to be positive)', [
            ('assert (weights[0][mask] > 0).all(), "an allowed key got no weight"',
             'assert (weights[0] > 0).all(), "every weight must be positive"'),
        ], 'fails on a correct attention'),
        ('q5', 'no mask in the general test', [
            ('for m in (None, mask, torch.zeros(3, 5, dtype=torch.bool))]',
             'for m in (None,)]'),
        ], 'a mutant that ignores the mask'),
        ('q5', 'no large scores in the general test', [
            ('cases += [(30 * q, 30 * k, v, None), (q[:, :1], k, v, None)]',
             'cases += [(q[:, :1], k, v, None)]'),
        ], 'overflows on large scores'),
        ('q5', 'no single query (L = 1) in the general test', [
            ('cases += [(30 * q, 30 * k, v, None), (q[:, :1], k, v, None)]',
             'cases += [(30 * q, 30 * k, v, None)]'),
        ], 'single query (L = 1)'),
        ('q5', 'square inputs (S = d_k) hide the sqrt(S) mutant', [
            ('q, k, v = torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 4, generator=g), torch.randn(2, 5, 6, generator=g)',
             'q, k, v = torch.randn(2, 3, 4, generator=g), torch.randn(2, 4, 4, generator=g), torch.randn(2, 4, 6, generator=g)'),
            ('mask = mha.causal_mask(3, 5) & torch.tensor([True, True, False, True, True])',
             'mask = mha.causal_mask(3, 4) & torch.tensor([True, True, False, True])'),
            ('for m in (None, mask, torch.zeros(3, 5, dtype=torch.bool))]',
             'for m in (None, mask, torch.zeros(3, 4, dtype=torch.bool))]'),
        ], 'sqrt(S)'),
        ('q1', 'drops the nan_to_num: a query whose keys are all blocked gets nan', [
            ('    weights = torch.softmax(scores, dim=-1)\n    weights = torch.nan_to_num(weights, nan=0.0)',
             '    weights = torch.softmax(scores, dim=-1)'),
        ], 'not nan'),
        ('q1', 'drops the scale', [
            ('    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n    if mask is not None:\n        scores = scores.masked_fill(~mask',
             '    scores = q @ k.transpose(-2, -1)\n    if mask is not None:\n        scores = scores.masked_fill(~mask'),
        ], 'mistake:no_scale'),
        ('q6', 'leaves the scale by sqrt(D)', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(parts.head_dim)  # [B, H, L, L]',
             'scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # [B, H, L, L]'),
        ], 'mistake:scale_by_d_model'),
        ('q6', 'drops the scale', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(parts.head_dim)  # [B, H, L, L]',
             'scores = q @ k.transpose(-2, -1)  # [B, H, L, L]'),
        ], 'mistake:no_scale'),
        ('q6', 'leaves the masked scores unused', [
            ('scores = scores.masked_fill(~real[:, None, None, :], float("-inf"))',
             'scores.masked_fill(~real[:, None, None, :], float("-inf"))'),
        ], 'mistake:mask_discarded'),
        ('q6', 'leaves the mask on the queries', [
            ('scores = scores.masked_fill(~real[:, None, None, :], float("-inf"))',
             'scores = scores.masked_fill(~real[:, None, :, None], float("-inf"))'),
        ], 'mistake:mask_on_queries'),
        ('q6', 'leaves the maximum over the queries', [
            ('scores = scores - scores.amax(dim=-1, keepdim=True)         # for a stable exp',
             'scores = scores - scores.amax(dim=-2, keepdim=True)         # for a stable exp'),
        ], 'mistake:max_over_queries'),
        ('q6', 'normalises over the queries', [
            ('scores = scores - scores.amax(dim=-1, keepdim=True)         # for a stable exp',
             'scores = scores - scores.amax(dim=-2, keepdim=True)         # for a stable exp'),
            ('weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)   # over the keys',
             'weights = scores.exp() / scores.exp().sum(dim=-2, keepdim=True)   # over the keys'),
        ], 'mistake:softmax_axis'),
        ('q6', 'inverted padding mask', [
            ('scores = scores.masked_fill(~real[:, None, None, :], float("-inf"))',
             'scores = scores.masked_fill(real[:, None, None, :], float("-inf"))'),
        ], 'mistake:inverted_mask'),
    ],
    'ex10_efficient_attention': [
        ('q2', 'rescales l but not acc when the maximum grows', [
            ('acc = acc * correction[..., None] + p @ v_block',
             'acc = acc + p @ v_block'),
        ], 'mistake:acc_not_rescaled'),
        ('q4', 'the naive exp of the raw logits (no maximum subtracted)', [
            ('block_sum = torch.exp(block - new_m[:, None]).sum(dim=-1)',
             'block_sum = torch.exp(block).sum(dim=-1)'),
            ('l = block_sum if m is None else l * torch.exp(m - new_m) + block_sum',
             'l = block_sum if m is None else l + block_sum'),
            ('return m + torch.log(l) - picked',
             'return torch.log(l) - picked'),
        ], 'mistake:overflow'),
        ('q1', 'does not rescale l when the maximum grows', [
            ('l = block_sum if l is None else l * torch.exp(m - new_m) + block_sum',
             'l = block_sum if l is None else l + block_sum'),
        ], 'the l you had is stale'),
        ('q2', 'does not rescale l and acc when the maximum grows', [
            ('correction = torch.exp(m - new_m)                      # [..., L]: old terms, new maximum',
             'correction = torch.ones_like(m)'),
        ], 'both l and acc are stale'),
        ('q2', 'no running maximum (exp overflows)', [
            ('p = torch.exp(s - new_m[..., None])                        # [..., L, b]',
             'p = torch.exp(s)'),
            ('correction = torch.exp(m - new_m)                      # [..., L]: old terms, new maximum',
             'correction = torch.ones_like(m)'),
        ], 'subtract the running maximum before exp'),
        ('q3', 'averages the two parts', [
            ('return w_a[..., None] * out_a + w_b[..., None] * out_b, lse',
             'return (out_a + out_b) / 2, lse'),
        ], 'in proportion to the share of the total probability mass'),
        ('q3', 'nan when a query has no key at all', [
            ('w_a = torch.exp(lse_a - lse).nan_to_num(0.0)',
             'w_a = torch.exp(lse_a - lse)'),
        ], 'must not produce nan'),
        ('q3', 'max instead of log-sum-exp', [
            ('lse = torch.logaddexp(lse_a, lse_b)                          # [..., L]',
             'lse = torch.maximum(lse_a, lse_b)'),
        ], 'is not max(a, b)'),
        ('q2', 'forgets the scale', [
            ('s = q @ k_block.transpose(-2, -1) * scale                  # [..., L, b]\n        new_m = s.amax(dim=-1) if m is None else torch.maximum(m, s.amax(dim=-1))\n        p = torch.exp(s - new_m[..., None])                        # [..., L, b]\n        if m is None:\n            l, acc = p.sum(dim=-1), p @ v_block',
             's = q @ k_block.transpose(-2, -1)                  # [..., L, b]\n        new_m = s.amax(dim=-1) if m is None else torch.maximum(m, s.amax(dim=-1))\n        p = torch.exp(s - new_m[..., None])                        # [..., L, b]\n        if m is None:\n            l, acc = p.sum(dim=-1), p @ v_block'),
        ], 'mistake:no_scale'),
        ('q4', 'does not rescale the running sum', [
            ('l = block_sum if m is None else l * torch.exp(m - new_m) + block_sum',
             'l = block_sum if m is None else l + block_sum'),
        ], 'mistake:stale_sum'),
        ('q4', 'returns the log-likelihood (sign reversed)', [
            ('return m + torch.log(l) - picked',
             'return picked - m - torch.log(l)'),
        ], 'mistake:sign'),
        ('q4', 'picks the target with its global index in every block', [
            ('local = (targets - start).clamp(0, b - 1)',
             'local = targets.clamp(0, b - 1)'),
        ]),
        ('q5', 'counts the first block too', [
            ('m, count = block_max, torch.zeros(block_max.shape, dtype=torch.long)',
             'm, count = block_max, torch.ones(block_max.shape, dtype=torch.long)'),
        ], 'count only the blocks AFTER the first'),
        ('q5', 'predicts log(64)', [
            ('prediction = 3.74  # H_64 - 1',
             'prediction = 4.16  # H_64 - 1'),
        ], 'disagrees with the measurement'),
    ],
    'ex13_positions': [
        ('q1', 'theta = base^(-i/d), i the pair index', [
            ('theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)   # [d/2]',
             'theta = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)'),
        ], 'mistake:exponent_i'),
        ('q1', 'interleaved pairs instead of halves', [
            ('x1, x2 = x[..., : d // 2], x[..., d // 2:]\n    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)',
             'x1, x2 = x[..., 0::2], x[..., 1::2]\n    return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)'),
        ], 'interleaved layout'),
        ('q1', 'rotates the wrong way', [
            ('return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)',
             'return torch.cat([x1 * cos + x2 * sin, x2 * cos - x1 * sin], dim=-1)'),
        ], 'the rotation goes the other way'),
        ('q2', 'every new token at position 0 (the cache offset forgotten)', [
            ('t = 0 if cache_k is None else cache_k.shape[-2]     # the new token\'s position',
             't = 0'),
        ], 'rotate each new key at ITS position'),
        ('q2', 'caches the keys before rotating them', [
            ('q_new, k_new = rope(q_new, position, base), rope(k_new, position, base)\n    cache_k = k_new if cache_k is None else torch.cat([cache_k, k_new], dim=-2)',
             'q_new, k_rot = rope(q_new, position, base), rope(k_new, position, base)\n    cache_k = k_new if cache_k is None else torch.cat([cache_k, k_new], dim=-2)'),
        ], 'rotate each new key at ITS position'),
        ('q3', 'positions counted from column 0', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)      # [B, L]',
             'positions = torch.arange(x.shape[-2]).expand(x.shape[0], -1)'),
        ], 'count the positions from the first real token'),
        ('q3', 'rotates the padding too (at negative positions)', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)      # [B, L]',
             'positions = mask.long().cumsum(dim=1) - 1'),
            ('return torch.where(mask[:, None, :, None], rotated, x)',
             'return rotated'),
        ], 'leave the padding positions exactly as they are'),
        ('q2', 'forgets the 1/sqrt(d_k) scale', [
            ('weights = torch.softmax(q_new @ cache_k.transpose(-2, -1) / math.sqrt(q_new.shape[-1]), dim=-1)',
             'weights = torch.softmax(q_new @ cache_k.transpose(-2, -1), dim=-1)'),
        ], 'mistake:no_scale'),
        ('q2', 'softmax over the queries', [
            ('weights = torch.softmax(q_new @ cache_k.transpose(-2, -1) / math.sqrt(q_new.shape[-1]), dim=-1)',
             'weights = torch.softmax(q_new @ cache_k.transpose(-2, -1) / math.sqrt(q_new.shape[-1]), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q4', 'reorders the rows over the whole width', [
            ('return weight.view(num_heads, d, D)[:, order].reshape(HD, D)       # the same order in every head',
             'return weight[torch.cat([torch.arange(0, HD, 2), torch.arange(1, HD, 2)])]'),
        ], 'mistake:whole_width'),
        ('q4', 'the inverse reordering', [
            ('return weight.view(num_heads, d, D)[:, order].reshape(HD, D)       # the same order in every head',
             'return weight.view(num_heads, d, D)[:, order.argsort()].reshape(HD, D)'),
        ], 'mistake:inverse'),
        ('q4', 'reorders the input columns', [
            ('return weight.view(num_heads, d, D)[:, order].reshape(HD, D)       # the same order in every head',
             'return weight[:, torch.cat([torch.arange(0, D, 2), torch.arange(1, D, 2)])]'),
        ], 'mistake:columns'),
        ('q5', 'rows and columns exchanged', [
            ('return torch.cat([rope(x[..., : d // 2], rows, base), rope(x[..., d // 2:], cols, base)], dim=-1)',
             'return torch.cat([rope(x[..., : d // 2], cols, base), rope(x[..., d // 2:], rows, base)], dim=-1)'),
        ], 'mistake:swapped'),
        ('q5', 'one position row + column', [
            ('return torch.cat([rope(x[..., : d // 2], rows, base), rope(x[..., d // 2:], cols, base)], dim=-1)',
             'return rope(x, rows + cols, base)'),
        ], 'mistake:summed'),
        # issue 21 item 10: a wrapper of the course's own reference is refused by what it calls
        ('q3', 'takes the left-padded positions from mha.GPT', [
            ('positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)      # [B, L]',
             'positions = mha.GPT._positions(torch.arange(x.shape[2]), mask)'),
        ], 'uses `mha.gpt` (your code called'),
    ],
    'ex14_modern_block': [
        ('q1', 'subtracts the mean (LayerNorm)', [
            ('return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight',
             'x = x - x.mean(dim=-1, keepdim=True)\n    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight'),
        ], 'RMSNorm does not subtract the mean'),
        ('q1', 'eps outside the square root', [
            ('return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight',
             'return x / (torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True)) + eps) * weight'),
        ], 'eps goes inside the square root'),
        ('q2', 'silu on the up projection', [
            ('return (F.silu(x @ W_gate) * (x @ W_up)) @ W_down',
             'return (F.silu(x @ W_up) * (x @ W_gate)) @ W_down'),
        ], 'silu goes on the GATE'),
        ('q2', 'ReLU instead of SiLU', [
            ('return (F.silu(x @ W_gate) * (x @ W_up)) @ W_down',
             'return (torch.relu(x @ W_gate) * (x @ W_up)) @ W_down'),
        ], 'not ReLU'),
        ('q3', 'post-norm instead of pre-norm', [
            ('h = x + attention(rms_norm(x, norm1_weight, eps))\n    return h + swiglu(rms_norm(h, norm2_weight, eps), W_gate, W_up, W_down)',
             'h = rms_norm(x + attention(x), norm1_weight, eps)\n    return rms_norm(h + swiglu(h, W_gate, W_up, W_down), norm2_weight, eps)'),
        ], 'post-norm block'),
        ('q3', 'second norm on x instead of h', [
            ('return h + swiglu(rms_norm(h, norm2_weight, eps), W_gate, W_up, W_down)',
             'return h + swiglu(rms_norm(x, norm2_weight, eps), W_gate, W_up, W_down)'),
        ], 'the second norm takes h'),
        ('q4', 'forgets to fold', [
            ('return weight[:, None] * W_gate, weight[:, None] * W_up',
             'return W_gate, W_up'),
        ], 'the weight is not folded in'),
        ('q4', 'scales the columns (shape error)', [
            ('return weight[:, None] * W_gate, weight[:, None] * W_up',
             'return W_gate * weight, W_up * weight'),
        ], "one number per INPUT feature"),
        ('q5', 'RMSNorm straight in float16 (the squares overflow)', [
            ('s = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-4)              # [..., 1]',
             's = torch.ones_like(x[..., :1])'),
        ], 'mistake:overflow'),
        ('q5', 'rescales the row but not eps', [
            ('+ eps / s / s)',
             '+ eps)'),
        ], 'mistake:eps_unscaled'),
        ('q6', 'forgets the 1/sqrt(d) scale', [
            ('return q @ k.transpose(-2, -1) / math.sqrt(d)',
             'return q @ k.transpose(-2, -1)'),
        ], 'mistake:no_scale'),
        ('q6', 'normalises to length 1 instead of a root mean square of 1', [
            ('q = q / torch.sqrt(q.pow(2).mean(dim=-1, keepdim=True) + eps)\n    k = k / torch.sqrt(k.pow(2).mean(dim=-1, keepdim=True) + eps)',
             'q = q / torch.sqrt(q.pow(2).sum(dim=-1, keepdim=True) + eps)\n    k = k / torch.sqrt(k.pow(2).sum(dim=-1, keepdim=True) + eps)'),
        ], 'mistake:unit_length'),
        ('q6', 'predicts a bound of 1', [
            ('score_bound = 4.0',
             'score_bound = 1.0'),
        ], 'disagrees with the measurement'),
        # issue 21 item 10: a wrapper of the course's own reference is refused by what it calls
        ('q3', 'lets mha.Block.forward wire stand-in parts', [
            ('h = x + attention(rms_norm(x, norm1_weight, eps))\n    return h + swiglu(rms_norm(h, norm2_weight, eps), W_gate, W_up, W_down)',
             'parts = __import__("types").SimpleNamespace(norm1=lambda t: rms_norm(t, norm1_weight, eps), attn=lambda t, **options: (attention(t), None), dropout=lambda t: t, norm2=lambda t: rms_norm(t, norm2_weight, eps), mlp=lambda t: swiglu(t, W_gate, W_up, W_down))\n    return mha.Block.forward(parts, x)[0]'),
        ], 'uses `mha.Block`'),
    ],
    'ex11_language_model': [
        ('q1', 'predicts the same position (no shift)', [
            ('logits = model(tokens[:, :-1])                    # [B, T-1, V]: position t predicts t + 1\n    return F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())',
             'logits = model(tokens)\n    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())'),
        ], 'must predict the NEXT token'),
        ('q2', 'keeps the smallest logits', [
            ('kth = logits.topk(k, dim=-1).values[..., -1:]                 # [..., 1]\n    return logits.masked_fill(logits < kth, float("-inf"))',
             'kth = logits.topk(k, dim=-1, largest=False).values[..., -1:]                 # [..., 1]\n    return logits.masked_fill(logits > kth, float("-inf"))'),
        ], 'keep the LARGEST logits'),
        ('q2', 'removed logits set to 0', [
            ('return logits.masked_fill(logits < kth, float("-inf"))',
             'return logits.masked_fill(logits < kth, 0.0)'),
        ], "not 0"),
        ('q3', 'drops the token that reaches p', [
            ('remove_sorted = mass_before >= p                    # the set had already reached p',
             'remove_sorted = probs.cumsum(dim=-1) > p'),
        ], 'the token whose probability makes the sum reach p belongs to the set too'),
        ('q4', 'absolute threshold', [
            ('threshold = p_base * probs.amax(dim=-1, keepdim=True)',
             'threshold = p_base'),
        ], 'the threshold is RELATIVE'),
        ('q5', 'mean of the texts\' mean losses', [
            ('return losses[real.flatten()].mean()',
             'return ((losses.view(real.shape) * real).sum(dim=1) / real.sum(dim=1)).mean()'),
        ], 'mistake:mean_of_means'),
        ('q5', 'averages over the padding too', [
            ('return losses[real.flatten()].mean()',
             'return losses.mean()'),
        ], 'mistake:padding_counted'),
        ('q6', 'predicts that min-p commutes with the temperature', [
            ('prediction = {"top_k": True, "top_p": False, "min_p": False}',
             'prediction = {"top_k": True, "top_p": False, "min_p": True}'),
        ], 'disagrees with the measurement'),
        ('q6', 'forgets the temperature on one side', [
            ('last = filter_fn(logits) / temperature',
             'last = filter_fn(logits)'),
        ]),
    ],
    'ex12_beam_search': [
        ('q1', 'ranks by the token log-probability only', [
            ('totals = (sums[:, :, None] + log_probs).reshape(B, K * V)      # [B, K*V]',
             'totals = log_probs.reshape(B, K * V)'),
        ], 'TOTAL log-probability'),
        ('q1', 'parent and token swapped', [
            ('return new_sums, index // V, index % V',
             'return new_sums, index % V, index // V'),
        ], 'packs the parent beam k and the token t'),
        ('q1', 'the packing undone as t * K + k', [
            ('return new_sums, index // V, index % V',
             'return new_sums, index % K, index // K'),
        ], 'mistake:packed_by_k'),
        ('q2', 'starts from K identical empty hypotheses', [
            ('prefixes = torch.zeros(1, 0, dtype=torch.long)         # [K, t]: one empty hypothesis',
             'prefixes = torch.zeros(beam_size, 0, dtype=torch.long)'),
            ('sums = torch.zeros(1, 1)                               # [1, K]',
             'sums = torch.zeros(1, beam_size)'),
        ], 'mistake:identical_start'),
        ('q2', 'does not reorder the prefixes by parent', [
            ('prefixes = torch.cat([prefixes[parents[0]], tokens[0][:, None]], dim=1)',
             'prefixes = torch.cat([prefixes[:len(tokens[0])] if prefixes.shape[0] >= len(tokens[0]) else prefixes[parents[0]], tokens[0][:, None]], dim=1)'),
        ]),
        ('q3', 'greedy already finds the best pair', [
            ('second = torch.tensor([[0.5, 0.5], [1.0, 0.0]])',
             'second = torch.tensor([[0.9, 0.1], [0.5, 0.5]])'),
        ], 'starts with it too'),
        ('q4', "greedy's path stays in the beam (the wider beam does as well)", [
            ('tables[1, 1] = torch.tensor([0.0, 0.0, 0.0, 0.5, 0.5])',
             'tables[1, 1] = torch.tensor([0.0, 0.0, 0.0, 0.2, 0.8])'),
        ], 'the beam must end lower'),
        ('q5', 'extends the finished hypotheses like the others', [
            ('    log_probs = torch.where(finished[..., None], carry, log_probs)\n',
             ''),
        ], 'mistake:extends_finished'),
        ('q5', 'carries a finished hypothesis over and also extends it', [
            ('carry = torch.full_like(log_probs, float("-inf"))            # [B, K, V]',
             'carry = log_probs.clone()'),
        ], 'mistake:also_extended'),
        ('q5', 'drops the finished hypotheses', [
            ('carry[..., eos_id] = 0.0                                      # eos again, for free',
             'pass'),
        ], 'mistake:drops_finished'),
        ('q5', 'charges eos again', [
            ('carry[..., eos_id] = 0.0                                      # eos again, for free',
             'carry[..., eos_id] = log_probs[..., eos_id]'),
        ], 'mistake:pays_eos_again'),
    ],
    'ex15_capstone': [
        ('q1', 'heads split by a view straight to [B, H, T, d_k]', [
            ('q = self.q_proj(x).view(B, T, H, d_k).transpose(1, 2)      # [B, H, T, d_k]',
             'q = self.q_proj(x).view(B, H, T, d_k)'),
            ('k = self.k_proj(x).view(B, T, H, d_k).transpose(1, 2)      # [B, H, T, d_k]',
             'k = self.k_proj(x).view(B, H, T, d_k)'),
            ('v = self.v_proj(x).view(B, T, H, d_k).transpose(1, 2)      # [B, H, T, d_k]',
             'v = self.v_proj(x).view(B, H, T, d_k)'),
        ], 'mistake:heads_by_view'),
        ('q5', 'the shift reversed: each position predicts the token before it', [
            ('logits = model(batch[:, :-1])                                    # [B, 64, V]',
             'logits = model(batch[:, 1:])'),
            ('batch[:, 1:].flatten())',
             'batch[:, :-1].flatten())'),
        ], 'mistake:reversed_shift'),
        # The first entry is graded through the instructor command by the slow tests: a training
        # bug, which must cost q5 (the grader's own training run) and nothing else.
        ('q5', 'targets not shifted: each position predicts its own token', [
            ('logits = model(batch[:, :-1])                                    # [B, 64, V]',
             'logits = model(batch[:, 1:])'),
        ], 'mistake:unshifted_targets'),
        ('q5', 'forgets optimizer.zero_grad() (the gradients add up)', [
            ('    optimizer.zero_grad()\n    loss.backward()',
             '    loss.backward()'),
        ], 'mistake:no_zero_grad'),
        ('q5', 'a model over the parameter budget', [
            ('CONFIG = dict(d_model=64, num_heads=4, num_layers=2, d_ff=256)\n\n\ndef make_model',
             'CONFIG = dict(d_model=128, num_heads=4, num_layers=4, d_ff=512)\n\n\ndef make_model'),
        ], 'the budget is 200,000'),
        ('q1', 'no causal mask', [
            ('weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)',
             'weights = torch.softmax(scores, dim=-1)'),
        ], 'mistake:no_mask'),
        ('q1', 'scales by sqrt(D)', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)',
             'scores = q @ k.transpose(-2, -1) / math.sqrt(D)'),
        ], 'the width of ONE head'),
        ('q1', 'softmax over the queries', [
            ('weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)',
             'weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-2)'),
        ], 'mistake:softmax_axis'),
        ('q1', 'interleaved heads', [
            ('q = self.q_proj(x).view(B, T, H, d_k).transpose(1, 2)',
             'q = self.q_proj(x).view(B, T, d_k, H).permute(0, 3, 1, 2)'),
            ('k = self.k_proj(x).view(B, T, H, d_k).transpose(1, 2)',
             'k = self.k_proj(x).view(B, T, d_k, H).permute(0, 3, 1, 2)'),
            ('v = self.v_proj(x).view(B, T, H, d_k).transpose(1, 2)',
             'v = self.v_proj(x).view(B, T, d_k, H).permute(0, 3, 1, 2)'),
            ('out = (weights @ v).transpose(1, 2).reshape(B, T, D)',
             'out = (weights @ v).permute(0, 2, 3, 1).reshape(B, T, D)'),
        ], 'head h takes the contiguous columns'),
        ('q2', 'exact GELU instead of the tanh approximation', [
            ('F.gelu(self.fc(x), approximate="tanh")',
             'F.gelu(self.fc(x))'),
        ], "tanh approximation"),
        ('q2', 'post-LN block', [
            ('x = x + self.attn(self.norm1(x))\n        return x + self.mlp(self.norm2(x))',
             'x = self.norm1(x + self.attn(x))\n        return self.norm2(x + self.mlp(x))'),
        ], 'post-LN block'),
        ('q3', 'forgets the positions', [
            ('x = self.tok_embed(tokens) + self.pos_embed(positions)',
             'x = self.tok_embed(tokens)'),
        ], 'add the learned positions'),
        ('q3', 'output layer not tied to the embedding', [
            ('self.lm_head.weight = self.tok_embed.weight',
             'pass'),
        ], 'tie them'),
        ('q3', 'no check of the length', [
            ('if T > self.max_len:',
             'if False:'),
        ], 'should raise ValueError'),
        ('q4', 'does not crop the context', [
            ('logits = model(tokens[:, -max_len:])[:, -1]',
             'logits = model(tokens)[:, -1]'),
        ], 'feed it only the last max_len'),
        ('q4', 'keeps the first max_len tokens', [
            ('logits = model(tokens[:, -max_len:])[:, -1]',
             'logits = model(tokens[:, :max_len])[:, -1]'),
        ], 'keep the LAST max_len tokens'),
        ('q4', 'multiplies the logits by the temperature', [
            ('torch.softmax(logits / temperature, dim=-1)',
             'torch.softmax(logits * temperature, dim=-1)'),
        ], 'divide the logits by the temperature'),
        ('q1', 'inverted causal mask', [
            ('weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)',
             'weights = torch.softmax(scores.masked_fill(~future, float("-inf")), dim=-1)'),
        ], 'mistake:inverted_mask'),
        ('q1', 'forgets the 1/sqrt(d_k) scale', [
            ('scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)           # [B, H, T, T]',
             'scores = q @ k.transpose(-2, -1)           # [B, H, T, T]'),
        ], 'mistake:no_scale'),
    ],
    'ex16_induction_heads': [
        ('q1', 'scores the earlier occurrence itself (offset 0)', [
            ('queries, keys = batch.dst[b] + i, batch.src[b] + i + 1',
             'queries, keys = batch.dst[b] + i, batch.src[b] + i'),
        ], 'mistake:offset_zero'),
        ('q1', 'two positions after the earlier occurrence (offset 2)', [
            ('queries, keys = batch.dst[b] + i, batch.src[b] + i + 1',
             'queries, keys = batch.dst[b] + i, batch.src[b] + i + 2'),
        ], 'mistake:offset_two'),
        ('q1', 'the queries are the predicted tokens, one position late', [
            ('queries, keys = batch.dst[b] + i, batch.src[b] + i + 1',
             'queries, keys = batch.dst[b] + i + 1, batch.src[b] + i + 2'),
        ], 'mistake:query_late'),
        ('q1', "leaves out the copy's first token as a query", [
            ('i = torch.arange(int(batch.length[b]) - 1)',
             'i = torch.arange(1, int(batch.length[b]) - 1)'),
        ], 'mistake:first_query_left_out'),
        ('q1', "counts the copy's last token as a query", [
            ('i = torch.arange(int(batch.length[b]) - 1)',
             'i = torch.arange(int(batch.length[b]))'),
        ], 'mistake:last_query_added'),
        ('q1', 'one mean over the copy positions of all the sequences', [
            ('per_sequence.append(weights[b, :, queries, keys].mean(dim=-1))   # [H]',
             'per_sequence.append(weights[b, :, queries, keys])'),
            ('return torch.stack(per_sequence).mean(dim=0)',
             'return torch.cat(per_sequence, dim=-1).mean(dim=-1)'),
        ], 'mistake:pooled'),
        ('q1', 'query and key axes swapped', [
            ('per_sequence.append(weights[b, :, queries, keys].mean(dim=-1))   # [H]',
             'per_sequence.append(weights[b, :, keys, queries].mean(dim=-1))'),
        ], 'mistake:transposed'),
        ('q2', 'zeroes sequence positions instead of features', [
            ('merged[..., head * d_k:(head + 1) * d_k] = 0.0',
             'merged[:, head * d_k:(head + 1) * d_k] = 0.0'),
        ], 'mistake:sequence_axis'),
        ('q2', "zeroes o_proj's output, not its input", [
            ('handle = attn.o_proj.register_forward_pre_hook(zero_head)',
             'handle = attn.o_proj.register_forward_hook(lambda module, args, out: zero_head(module, (out,))[0])'),
        ], 'mistake:o_proj_output'),
        ('q2', "zeroes the head's queries", [
            ('handle = attn.o_proj.register_forward_pre_hook(zero_head)',
             'handle = attn.q_proj.register_forward_hook(lambda module, args, out: zero_head(module, (out,))[0])'),
        ], 'mistake:query_zeroed'),
        ('q2', 'layer and head swapped', [
            ('attn = model.attns[layer]',
             'attn = model.attns[head]'),
            ('merged[..., head * d_k:(head + 1) * d_k] = 0.0',
             'merged[..., layer * d_k:(layer + 1) * d_k] = 0.0'),
        ], 'mistake:layer_and_head_swapped'),
        ('q2', 'the pre-hook returns nothing: the input is unchanged', [
            ('return (merged,)',
             'return None'),
        ], 'mistake:nothing_removed'),
        ('q2', 'leaves the hook in the model', [
            ('handle.remove()                                       # the model as it was',
             'pass'),
        ], 'mistake:left_in_model'),
        ('q3', 'the head with the lowest previous-token score', [
            ('previous_token_head = (0, int(previous_scores.argmax()))',
             'previous_token_head = (0, int(previous_scores.argmin()))'),
        ], 'is not the previous-token head'),
        ('q3', 'the losses, not their increase', [
            ('ablation_costs = induction.ablation_table(model, batch)',
             'ablation_costs = induction.ablation_table(model, batch) + induction.evaluate(model, batch)'),
        ], 'the question asks for their increase'),
        ('q3', 'counts as costly only the heads the scores named', [
            ('costly_heads = [(layer, head) for layer, head in (ablation_costs > 0.3).nonzero().tolist()]',
             'costly_heads = [previous_token_head, induction_head]'),
        ], 'not only those of the heads the scores named'),
        ('q4', 'layer 1 scored on the weights of the whole model', [
            ('with torch.no_grad(), induction.ablate_heads(model, heads):\n        _, weights = model(batch.tokens, need_weights=True)   # recomputed without those heads',
             'with torch.no_grad():\n        _, weights = model(batch.tokens, need_weights=True)'),
        ], 'mistake:weights_not_recomputed'),
        ('q4', 'predicts that layer 1 loses everything', [
            ('prediction = "c"',
             'prediction = "b"'),
        ], 'is not what the given model does'),
        ('q5', "the lag is the scan's row, not the distance", [
            ('shifted_lag = int(lags.max(dim=1).values.argmax()) + 1',
             'shifted_lag = int(lags.max(dim=1).values.argmax())'),
        ], 'that is a row number of the scan, not a distance'),
        ('q5', "layer 1 scanned by lag from the query, not by offset from the earlier occurrence", [
            ('offsets = induction.offset_scan(shifted_weights[1], batch, range(1, 17))',
             'offsets = induction.lag_scan(shifted_weights[1], range(1, 17))'),
        ], 'whether shifted_offset is the offset of the highest offset score'),
        ('q5', 'the joint cost summed from the heads removed one at a time', [
            ('joint_cost = induction.evaluate(shifted, batch, shifted_heads) - base   # removed together',
             'joint_cost = sum(induction.evaluate(shifted, batch, [h]) - base for h in shifted_heads)'),
        ], 'mistake:summed_alone'),
        ('q5', 'the loss without the heads, not its increase', [
            ('joint_cost = induction.evaluate(shifted, batch, shifted_heads) - base   # removed together',
             'joint_cost = induction.evaluate(shifted, batch, shifted_heads)'),
        ], 'mistake:loss_not_increase'),
    ],
    'ex17_attention_2025': [
        ('q1', 'RoPE applied to the latent, the content part', [
            ('latent = attn.kv_a_layernorm(latent)[:, None]               # [B, 1, L, r]: never rotated',
             'latent = mha.apply_rope(attn.kv_a_layernorm(latent)[:, None], positions, attn.rope_base, layout=attn.rope_layout)'),
        ], 'mistake:rope_on_latent'),
        ('q1', 'the latent cached before its RMSNorm', [
            ('latent = attn.kv_a_layernorm(latent)[:, None]               # [B, 1, L, r]: never rotated',
             'latent = latent[:, None]'),
        ], 'mistake:latent_not_normed'),
        ('q1', 'the RoPE part of the key not rotated', [
            ('k_rope = mha.apply_rope(k_rope[:, None], positions, attn.rope_base, layout=attn.rope_layout)',
             'k_rope = k_rope[:, None]'),
        ], 'mistake:rope_missing'),
        ('q2', 'returns the last position that changes nothing (off by one)', [
            ('            return j\n',
             '            return j - 1\n'),
        ], 'mistake:measure_off_by_one'),
        ('q2', 'compares the whole output, not the output at the position', [
            ('if (run(changed)[:, position] - before).abs().max() > 1e-5:',
             'if (run(changed) - run(x)).abs().max() > 1e-5:'),
        ], 'mistake:whole_output'),
        ('q2', 'predicts a window of W reaches W positions back', [
            ('prediction = 9',
             'prediction = 6'),
        ], 'is not what the stack does'),
        ('q3', 'the sink given the value of the first token', [
            ('weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]',
             'weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)'),
            ('return weights @ v, weights                                         # the sink adds nothing',
             'return weights @ torch.cat([v, v[..., :1, :]], dim=-2), weights[..., :-1]'),
        ], 'mistake:sink_given_value'),
        ('q3', 'the sink logit scaled by 1/sqrt(d_k)', [
            ('weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]',
             'weights = torch.softmax(torch.cat([scores, sink / math.sqrt(q.shape[-1])], dim=-1), dim=-1)[..., :-1]'),
        ], 'mistake:sink_scaled'),
    ],
}
