"""Classic mistakes, written into one question of each exercise's solution.

Each entry is ``(question, description, [(text in the solution, buggy text), ...])``.
``python -m grading.selfcheck`` and the test suite check that a solution with the bug
loses exactly the points of ``question`` and keeps every other question's points.
Add one here whenever a student finds a new way to be wrong.
"""

BUGS = {
    'ex01_self_attention': [
        ('q1', 'scales with floor division //', [
            ('/ math.sqrt(d_k)',
             '// math.sqrt(d_k)'),
        ]),
        ('q1', 'forgets the 1/sqrt(d_k) scaling', [
            ('return q @ k.transpose(-2, -1) / math.sqrt(d_k)',
             'return q @ k.transpose(-2, -1)'),
        ]),
        ('q2', 'softmax over the wrong axis', [
            ('exps / exps.sum(dim=-1, keepdim=True)',
             'exps / exps.sum(dim=0, keepdim=True)'),
        ]),
        ('q2', 'no max subtraction (overflow to nan)', [
            ('shifted = scores - scores.amax(dim=-1, keepdim=True)',
             'shifted = scores'),
        ]),
        ('q3', 'element-wise weights * v', [
            ('return weights @ v, weights',
             'return weights * v, weights'),
        ]),
        ('q4', 'forgets the projections', [
            ('return attention(x @ W_q, x @ W_k, x @ W_v)',
             'return attention(x, x, x)'),
        ]),
    ],
    'ex02_multi_head': [
        ('q1', 'reshapes straight to [B, H, L, d]', [
            ('return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)',
             'return x.view(B, num_heads, L, D // num_heads)'),
        ]),
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
        ]),
        ('q4', 'forgets the biases', [
            ('return 4 * (d_model * d_model + d_model)',
             'return 4 * d_model * d_model'),
        ]),
    ],
    'ex03_masking': [
        ('q1', 'inverted mask (True = blocked)', [
            ('return torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)',
             'return ~torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)'),
        ]),
        ('q1', 'top-left alignment when L < S', [
            ('tril(diagonal=S - L)',
             'tril(diagonal=0)'),
        ]),
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
        ]),
        ('q3', 'fills blocked scores with 0', [
            ('scores.masked_fill(~mask, float("-inf"))',
             'scores.masked_fill(~mask, 0.0)'),
        ]),
        ('q3', 'nan for fully masked rows', [
            ('weights = torch.nan_to_num(weights, nan=0.0)',
             'weights = weights'),
        ]),
        ('q4', 'combines with | instead of &', [
            ('return causal_mask(L) & padding_mask(lengths, L)',
             'return causal_mask(L) | padding_mask(lengths, L)'),
        ]),
    ],
    'ex04_cross_attention': [
        ('q1', 'queries from the memory', [
            ('q = x @ W_q',
             'q = memory @ W_q'),
        ]),
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
        ('q2', 'ignores the memory mask', [
            ('scores = scores.masked_fill(~memory_mask, float("-inf"))',
             'pass'),
        ]),
        ('q3', 'argmax over the queries', [
            ('return weights.argmax(dim=-1)',
             'return weights.argmax(dim=-2)'),
        ]),
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
        ('q4', 'second residual adds x instead of h', [
            ('return post_ln(h, ffn, norm2)',
             'return norm2(x + ffn(h))'),
        ]),
        ('q5', 'sin and cos swapped', [
            ('pe[:, 0::2] = torch.sin(angle)',
             'pe[:, 0::2] = torch.cos(angle)'),
            ('pe[:, 1::2] = torch.cos(angle)',
             'pe[:, 1::2] = torch.sin(angle)'),
        ]),
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
        ]),
        ('q3', 'running variance not corrected to unbiased', [
            ('self.momentum * var * n / (n - 1)',
             'self.momentum * var'),
        ]),
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
            ('logits = model(src, shift_right(tgt, bos_id))',
             'logits = model(src, tgt)'),
        ]),
        ('q3', 'argmax of the first position', [
            ('next_token = logits[:, -1].argmax(dim=-1)',
             'next_token = logits[:, 0].argmax(dim=-1)'),
        ]),
        ('q3', 'finished rows keep generating', [
            ('next_token = next_token.masked_fill(finished, eos_id)',
             'pass'),
        ]),
        ('q4', 'appends along the feature axis', [
            ('cache_k = torch.cat([cache_k, k_new], dim=-2)',
             'cache_k = torch.cat([cache_k, k_new], dim=-1)'),
            ('cache_v = torch.cat([cache_v, v_new], dim=-2)',
             'cache_v = torch.cat([cache_v, v_new], dim=-1)'),
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
        ]),
    ],
}
