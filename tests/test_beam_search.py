"""Beam search against greedy decoding and against exhaustive search on a tiny vocabulary."""
import itertools
import math

import pytest
import torch

import mha
from mha import beam_search, greedy_decode

BOS, EOS, V = 0, 1, 4


def tiny_model(seed, eos_bias=0.0, vocab=V):
    torch.manual_seed(seed)
    model = mha.Transformer(7, vocab, d_model=16, num_heads=2, num_layers=1, d_ff=32).eval()
    with torch.no_grad():
        model.generator.bias[EOS] += eos_bias  # how soon hypotheses tend to end
    return model


def sequence_score(model, src, generated, length_penalty):
    """log p(generated | src) by teacher forcing (no cache, no beam), / n ** length_penalty."""
    tgt = torch.tensor([[BOS] + generated[:-1]])
    logp = model(src, tgt).log_softmax(-1)[0]  # [n, V]
    total = logp[torch.arange(len(generated)), torch.tensor(generated)].sum().item()
    return total / len(generated) ** length_penalty


def all_hypotheses(max_len):
    """Every finished hypothesis: non-eos tokens then eos, or max_len - 1 tokens without eos."""
    others = [t for t in range(V) if t != EOS]
    for n in range(0, max_len - 1):
        for body in itertools.product(others, repeat=n):
            yield list(body) + [EOS]
    yield from (list(body) for body in itertools.product(others, repeat=max_len - 1))


@pytest.mark.parametrize("eos_bias", [-1.0, 0.0, 0.5])
@pytest.mark.parametrize("seed", range(4))
def test_beam_size_one_equals_greedy_decode(seed, eos_bias):
    # eos_bias makes eos often the second choice: it must not end greedy's hypothesis then
    model = tiny_model(seed, eos_bias=eos_bias)
    src = torch.randint(2, 7, (16, 6), generator=torch.Generator().manual_seed(seed))
    tokens, _ = beam_search(model, src, beam_size=1, max_len=9, bos_id=BOS, eos_id=EOS)
    assert torch.equal(tokens, greedy_decode(model, src, 9, BOS, EOS))


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_a_beam_as_wide_as_all_hypotheses_finds_the_exhaustive_optimum(seed, length_penalty):
    max_len = 5  # 3^4 = 81 hypotheses without eos alive at most
    model = tiny_model(seed, eos_bias=-0.5)
    src = torch.randint(2, 7, (1, 5), generator=torch.Generator().manual_seed(seed))
    scored = [(sequence_score(model, src, h, length_penalty), h) for h in all_hypotheses(max_len)]
    best_score, best = max(scored)
    tokens, scores = beam_search(model, src, beam_size=81, max_len=max_len, bos_id=BOS,
                                 eos_id=EOS, length_penalty=length_penalty)
    assert tokens[0].tolist()[:len(best) + 1] == [BOS] + best
    assert scores[0].item() == pytest.approx(best_score, abs=1e-5)


@pytest.mark.parametrize("length_penalty", [0.0, 0.6, 1.0])
def test_the_returned_score_is_the_length_normalised_log_probability(length_penalty):
    model = tiny_model(5, eos_bias=0.0)
    src = torch.randint(2, 7, (3, 5), generator=torch.Generator().manual_seed(1))
    tokens, scores = beam_search(model, src, beam_size=3, max_len=8, bos_id=BOS, eos_id=EOS,
                                 length_penalty=length_penalty)
    for b in range(3):
        row = tokens[b, 1:].tolist()
        generated = row[:row.index(EOS) + 1] if EOS in row else row
        assert scores[b].item() == pytest.approx(
            sequence_score(model, src[b:b + 1], generated, length_penalty), abs=1e-5)


def test_rows_of_a_batch_are_searched_independently():
    model = tiny_model(2, eos_bias=0.0)
    src = torch.randint(2, 7, (4, 6), generator=torch.Generator().manual_seed(2))
    together, scores = beam_search(model, src, beam_size=3, max_len=8, bos_id=BOS, eos_id=EOS)
    for b in range(4):
        alone, score = beam_search(model, src[b:b + 1], beam_size=3, max_len=8, bos_id=BOS,
                                   eos_id=EOS)
        width = alone.shape[1]
        assert together[b, :width].tolist() == alone[0].tolist()
        assert (together[b, width:] == EOS).all()
        assert scores[b].item() == pytest.approx(score.item(), abs=1e-5)


def test_rows_padded_differently_are_each_searched_as_if_alone():
    # each row's beams must see that row's padding mask, not another row's
    model = tiny_model(2, eos_bias=0.0)
    lengths = [6, 2, 4]
    src = torch.randint(2, 7, (3, 6), generator=torch.Generator().manual_seed(3))
    src_mask = mha.padding_mask(torch.tensor(lengths), 6)  # [3, 1, 1, 6]
    together, scores = beam_search(model, src, beam_size=3, max_len=8, bos_id=BOS, eos_id=EOS,
                                   src_mask=src_mask)
    for b, n in enumerate(lengths):
        alone, score = beam_search(model, src[b:b + 1, :n], beam_size=3, max_len=8, bos_id=BOS,
                                   eos_id=EOS)
        width = alone.shape[1]
        assert together[b, :width].tolist() == alone[0].tolist()
        assert scores[b].item() == pytest.approx(score.item(), abs=1e-5)


def test_output_starts_with_bos_and_respects_max_len():
    model = tiny_model(0)
    src = torch.randint(2, 7, (2, 4))
    tokens, _ = beam_search(model, src, beam_size=4, max_len=6, bos_id=BOS, eos_id=EOS)
    assert (tokens[:, 0] == BOS).all() and tokens.shape[1] <= 6


@pytest.mark.parametrize("kwargs, message", [
    (dict(beam_size=0, max_len=5), "beam_size must be >= 1"),
    (dict(beam_size=2, max_len=1), "max_len counts the bos token"),
])
def test_bad_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        beam_search(tiny_model(0), torch.zeros(1, 3, dtype=torch.long), bos_id=BOS, eos_id=EOS,
                    **kwargs)


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_unlikely_early_eos_does_not_cut_the_search_short(length_penalty):
    """eos is a weak candidate at every step (ranked below the beam): those hypotheses must
    not count as finished, or they fill the beam_size quota and the search stops before the
    likely long hypothesis ends, returning something far worse than greedy's."""
    model = tiny_model(3, eos_bias=-2.0, vocab=8)
    src = torch.randint(2, 7, (32, 6), generator=torch.Generator().manual_seed(0))
    _, greedy_scores = beam_search(model, src, beam_size=1, max_len=10, bos_id=BOS, eos_id=EOS,
                                   length_penalty=length_penalty)
    _, beam_scores = beam_search(model, src, beam_size=3, max_len=10, bos_id=BOS, eos_id=EOS,
                                 length_penalty=length_penalty)
    assert (beam_scores >= greedy_scores - 1e-5).all()


class TableModel(torch.nn.Module):
    """A stand-in for the Transformer whose next-token probabilities are a table:
    ``probs[t][last token]`` after ``t`` generated tokens. It counts ``t`` with its
    self-attention cache, so beam_search drives it exactly like the real model."""

    def __init__(self, probs):
        super().__init__()
        self.log_probs = torch.tensor(probs).log()  # [T, V, V]

    def encode(self, src, src_mask=None):
        return torch.zeros(src.shape[0], 1, 1)  # no memory is needed

    def new_caches(self):
        return [(mha.KVCache(), mha.KVCache(static=True))]

    def decode(self, tgt, memory, src_mask=None, caches=None):
        self_cache = caches[0][0]
        t = len(self_cache)
        self_cache.update(*[torch.zeros(tgt.shape[0], 1, 1, 1)] * 2)  # one more token
        return self.log_probs[t][tgt[:, -1]][:, None]  # [N, 1, V], log-probs as logits


def table_mean_log_prob(probs, hypothesis, bos=BOS):
    """Mean log-probability of ``hypothesis`` (after bos) under a TableModel's ``probs``."""
    prev, total = bos, 0.0
    for t, token in enumerate(hypothesis):
        p = probs[t][prev][token]
        total, prev = total + (math.log(p) if p else float("-inf")), token
    return total / len(hypothesis)


def test_an_eos_candidate_ranked_below_the_beam_does_not_finish():
    """Worked by hand, tokens (bos, eos, a, b), beam_size 2, mean log-probability.

    Step 1 from bos: a .5, b .4, eos .1 -> beam [a (.5), b (.4)].
    Step 2: from a: eos .6, a .3, b .1; from b: a .45, eos .4, b .15. Ranked candidates:
    a eos (.30), b a (.18), b eos (.16), a a (.15). "a eos" ranks in the beam and
    finishes; "b eos" ranks third, below the beam, so it is dropped and "a a" takes the
    second place: beam [b a, a a] with one finished hypothesis. (Were "b eos" finished,
    two finished hypotheses and no better alive one would stop the search here with
    "a eos", mean log .30 / 2 = -0.602.)
    Step 3, after a: eos .99 -> "b a eos" scores (log .4 + log .45 + log .99) / 3 = -0.575,
    the best of all (exhaustive search agrees below)."""
    bos, eos, a, b = range(4)
    unused = [.25] * 4  # rows for a last token that cannot occur at that step
    probs = [  # probs[t][last token] = next-token probabilities (bos, eos, a, b)
        [[0, .1, .5, .4], unused, unused, unused],
        [unused, unused, [0, .6, .3, .1], [0, .4, .45, .15]],
        [unused, unused, [0, .99, .005, .005], [0, .99, .005, .005]],
    ]
    model = TableModel(probs)
    tokens, scores = beam_search(model, torch.zeros(1, 1, dtype=torch.long), beam_size=2,
                                 max_len=4, bos_id=bos, eos_id=eos)
    expected = (math.log(.4) + math.log(.45) + math.log(.99)) / 3
    assert tokens[0].tolist() == [bos, b, a, eos]
    assert scores[0].item() == pytest.approx(expected, abs=1e-6)
    # exhaustive search: every hypothesis of up to max_len - 1 = 3 tokens
    assert max(all_hypotheses(4), key=lambda h: table_mean_log_prob(probs, h)) == [b, a, eos]


def test_the_search_goes_on_while_an_alive_hypothesis_can_beat_the_finished_ones():
    """Worked by hand, tokens (bos, eos, a, b), beam_size 2, mean log-probability.

    Step 1 from bos: eos .5, a .4, b .1 -> "eos" finishes (mean log .5 = -0.693), beam [a, b].
    Step 2: from a: a .7, eos .3; from b: eos .9, a .05, b .05. Ranked candidates:
    a a (.28), a eos (.12), b eos (.09), b a (.005). "a eos" ranks in the beam and finishes
    (-1.06): two finished hypotheses, as many as the beam. But "a a" is alive with mean
    log .28 / 2 = -0.636, better than "eos" were it to end now, so the search goes on.
    Step 3, after a: eos .99 -> "a a eos" scores (log .28 + log .99) / 3 = -0.428, the
    best of all (exhaustive search agrees below). Stopping at two finished hypotheses
    would return "eos"."""
    bos, eos, a, b = range(4)
    unused = [.25] * 4  # rows for a last token that cannot occur at that step
    probs = [  # probs[t][last token] = next-token probabilities (bos, eos, a, b)
        [[0, .5, .4, .1], unused, unused, unused],
        [unused, unused, [0, .3, .7, 0], [0, .9, .05, .05]],
        [unused, unused, [0, .99, .005, .005], [0, .99, .005, .005]],
    ]
    tokens, scores = beam_search(TableModel(probs), torch.zeros(1, 1, dtype=torch.long),
                                 beam_size=2, max_len=4, bos_id=bos, eos_id=eos)
    assert tokens[0].tolist() == [bos, a, a, eos]
    assert scores[0].item() == pytest.approx((math.log(.28) + math.log(.99)) / 3, abs=1e-6)
    # exhaustive search: every hypothesis of up to max_len - 1 = 3 tokens
    assert max(all_hypotheses(4), key=lambda h: table_mean_log_prob(probs, h)) == [a, a, eos]
