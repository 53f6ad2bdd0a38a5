"""Beam search for the encoder-decoder :class:`mha.Transformer`."""
from __future__ import annotations

import torch

from .generation import eval_mode
from .transformer import Transformer


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: torch.Tensor,
    *,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    src_mask: torch.Tensor | None = None,
    length_penalty: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the ``beam_size`` most probable partial translations instead of greedy's one.

    Returns ``(tokens, scores)``: tokens ``[B, <= max_len]`` start with ``bos_id`` and hold
    each row's best finished hypothesis, padded with ``eos_id``; scores ``[B]``.

    A hypothesis ends when it emits ``eos_id`` or when its length (counting bos) reaches
    ``max_len``. Its score is ``sum of log p(generated token) / n ** length_penalty``
    where the sum and ``n`` cover the generated tokens, eos included: ``length_penalty=0``
    ranks by total log-probability (which favours short outputs, every token costs), ``1``
    by the mean per token.

    Each step (as in fairseq): every alive hypothesis is extended by every token, and the
    candidates are taken best first (by summed log-probability) until ``beam_size`` of them
    stay alive (among the ``2 * beam_size`` best there are always enough that do not end).
    A candidate ending in eos becomes a finished hypothesis only if it ranks among the
    ``beam_size`` best. A row stops once it has ``beam_size`` finished hypotheses *and* no
    alive one scores better, were it to end now, than the best finished one (transformers'
    default rule; without the second condition a few weak early endings can stop the search
    before the likely long hypothesis ends). With ``beam_size=1`` this is exactly greedy decoding
    (:func:`mha.greedy_decode`); with a beam as wide as the number of possible
    hypotheses it is exhaustive search.

    The beams are folded into the batch (``B * beam_size`` rows), so the model runs once per
    step; the KV caches follow their hypotheses with :meth:`mha.KVCache.reorder`.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be >= 1; got beam_size={beam_size}")
    if max_len < 2:
        raise ValueError(f"max_len counts the bos token, so it must be >= 2 to generate "
                         f"anything; got max_len={max_len}")
    B, K = src.shape[0], beam_size
    device = src.device
    with eval_mode(model):
        memory = model.encode(src, src_mask).repeat_interleave(K, dim=0)  # [B*K, S, D]
        if src_mask is not None and src_mask.shape[0] == B:
            src_mask = src_mask.repeat_interleave(K, dim=0)
        caches = model.new_caches()
        tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=device)
        # one real hypothesis per row at the start: the others' -inf keeps them out of topk
        sums = torch.full((B, K), float("-inf"), device=device)
        sums[:, 0] = 0.0
        best = [(float("-inf"), None)] * B  # per row: (score, token list) of the best finished
        num_finished = [0] * B
        done = [False] * B

        def finish(b: int, row_tokens: list[int], total: float, n: int) -> None:
            score = total / n ** length_penalty
            num_finished[b] += 1
            if score > best[b][0]:
                best[b] = (score, row_tokens)

        for length in range(1, max_len):  # `length` tokens so far (bos included)
            logits = model.decode(tokens[:, -1:], memory, src_mask, caches=caches)[:, -1]
            logp = logits.float().log_softmax(dim=-1)  # [B*K, V]
            V = logp.shape[-1]
            candidates = (sums.reshape(B * K, 1) + logp).reshape(B, K * V)
            top_sums, top_index = candidates.topk(min(2 * K, K * V), dim=-1)  # [B, 2K]
            top_sums, top_index = top_sums.tolist(), top_index.tolist()  # plain Python from here
            prefixes = tokens.tolist()
            rows, new_tokens, new_sums = [], [], []
            for b in range(B):
                alive = []
                if not done[b]:
                    for rank, (total, index) in enumerate(zip(top_sums[b], top_index[b])):
                        if total == float("-inf") or len(alive) == K:
                            break
                        row, token = b * K + index // V, index % V
                        if token == eos_id:
                            if rank < K:
                                finish(b, prefixes[row] + [eos_id], total, length)
                        else:
                            alive.append((row, token, total))
                    if length + 1 == max_len:  # the alive ones reach max_len: they end too
                        for row, token, total in alive:
                            finish(b, prefixes[row] + [token], total, length)
                        alive = []
                    best_alive = max((total for _, _, total in alive), default=float("-inf"))
                    done[b] = num_finished[b] >= K and best_alive / length ** length_penalty <= best[b][0]
                    if done[b]:
                        alive = []
                # rows that have ended keep running as placeholders with score -inf
                alive += [(b * K, eos_id, float("-inf"))] * (K - len(alive))
                for row, token, total in alive:
                    rows.append(row)
                    new_tokens.append(token)
                    new_sums.append(total)
            if all(done) or length + 1 == max_len:
                break
            index = torch.tensor(rows, device=device)  # [B*K]: which hypothesis each row extends
            tokens = torch.cat([tokens[index], torch.tensor(new_tokens, device=device)[:, None]], 1)
            sums = torch.tensor(new_sums, device=device).reshape(B, K)
            for self_cache, _ in caches:  # the cross-attention cache is the same for all beams
                self_cache.reorder(index)

    width = max(len(t) for _, t in best)
    out = torch.full((B, width), eos_id, dtype=torch.long, device=device)
    for b, (_, row_tokens) in enumerate(best):
        out[b, :len(row_tokens)] = torch.tensor(row_tokens)
    return out, torch.tensor([score for score, _ in best], device=device)
