"""Specifications of mha.course.induction: the copy task, the head scores and head ablation.

The references are hand-built attention patterns, loops over positions, and an attention
forward pass written out here head by head from the model's own weights.
"""
from __future__ import annotations

import hashlib
import math
import os

import pytest
import torch
import torch.nn.functional as F

from mha import apply_rope
from mha.course.induction import (AttentionOnly, CopyBatch, TrainResult, ablate_heads,
                                  ablation_table, copy_batch, copy_loss, copy_loss_by_position,
                                  direct_logit_accuracy, evaluate, exercise_model, head_scores,
                                  induction_score, lag_scan, lag_score, measure_exercise_model,
                                  offset_scan,
                                  path_ablated_loss, previous_token_score, run_with_head_outputs,
                                  scores_over_training, train_exercise_weights,
                                  uniform_causal_weights, EXERCISE_MODELS, EXERCISE_WEIGHTS)


def batch_of(seed=0, B=200, **kw):
    return copy_batch(B, generator=torch.Generator().manual_seed(seed), **kw)


def test_each_sequence_repeats_one_segment_later_without_overlap():
    batch = batch_of(B=500)
    T = batch.tokens.shape[1]
    for b in range(500):
        P, s, d = int(batch.length[b]), int(batch.src[b]), int(batch.dst[b])
        assert 16 <= P <= 32
        assert 0 <= s and s + P <= d and d + P <= T
        assert torch.equal(batch.tokens[b, d:d + P], batch.tokens[b, s:s + P])


def test_lengths_and_positions_cover_their_whole_ranges():
    batch = batch_of(B=3000)
    assert set(batch.length.tolist()) == set(range(16, 33))
    assert batch.src.min() == 0
    assert (batch.dst + batch.length).max() == 64  # some copies end at the last token
    assert (batch.dst == batch.src + batch.length).any()  # and some start right after


def test_same_generator_seed_gives_the_same_batch():
    a, b = batch_of(seed=3), batch_of(seed=3)
    assert all(torch.equal(x, y) for x, y in zip(
        (a.tokens, a.src, a.dst, a.length), (b.tokens, b.src, b.dst, b.length)))


def test_impossible_lengths_are_refused():
    with pytest.raises(ValueError, match="2 \\* max_len"):
        copy_batch(2, seq_len=40, max_len=32)
    with pytest.raises(ValueError, match="min_len <= max_len"):
        copy_batch(2, min_len=20, max_len=10)


def test_target_mask_scores_the_copy_but_its_first_token():
    # worked by hand: T = 10, copy at 6..8 (P = 3): targets 7 and 8, predicted at 6 and 7
    batch = CopyBatch(torch.zeros(1, 10, dtype=torch.long), torch.tensor([1]),
                      torch.tensor([6]), torch.tensor([3]))
    assert batch.target_mask()[0].nonzero().flatten().tolist() == [6, 7]


def test_copy_loss_is_the_mean_over_the_copy_targets_computed_one_by_one():
    batch = batch_of(B=4)
    logits = torch.randn(4, 64, 64, generator=torch.Generator().manual_seed(1))
    losses = []
    for b in range(4):
        d, P = int(batch.dst[b]), int(batch.length[b])
        for target in range(d + 1, d + P):  # the copy's tokens after its first
            log_p = torch.log_softmax(logits[b, target - 1], dim=-1)
            losses.append(-log_p[batch.tokens[b, target]].item())
    assert copy_loss(logits, batch).item() == pytest.approx(sum(losses) / len(losses), rel=1e-5)


def causal_uniform(B, H, T):
    w = torch.tril(torch.ones(T, T))
    return (w / w.sum(-1, keepdim=True)).expand(B, H, T, T).clone()


def test_previous_token_score_of_a_pure_previous_token_head_is_one():
    T = 8
    w = causal_uniform(2, 3, T)
    w[:, 1] = 0
    w[:, 1, 0, 0] = 1  # query 0 has only itself
    w[:, 1, torch.arange(1, T), torch.arange(T - 1)] = 1
    score = previous_token_score(w)
    assert score[1] == pytest.approx(1.0)
    # a uniform causal head puts 1/(t+1) on t - 1: the mean over t = 1..T-1
    uniform = sum(1 / (t + 1) for t in range(1, T)) / (T - 1)
    assert score[0].item() == pytest.approx(uniform) and score[2].item() == pytest.approx(uniform)


def test_induction_score_reads_the_token_after_the_earlier_occurrence():
    batch = batch_of(B=3)
    B, T = batch.tokens.shape
    w = causal_uniform(B, 2, T)
    for b in range(B):  # head 1: the textbook induction head
        s, d, P = int(batch.src[b]), int(batch.dst[b]), int(batch.length[b])
        for i in range(P - 1):
            w[b, 1, d + i] = 0
            w[b, 1, d + i, s + i + 1] = 1
    assert induction_score(w, batch)[1] == pytest.approx(1.0)
    assert induction_score(w, batch, offset=0)[1] == pytest.approx(0.0)
    assert induction_score(w, batch, offset=2)[1] == pytest.approx(0.0)
    # the uniform head: mean of 1/(query + 1) over the copy queries, sequence by sequence
    expected = sum(sum(1 / (int(batch.dst[b]) + i + 1) for i in range(int(batch.length[b]) - 1))
                   / (int(batch.length[b]) - 1) for b in range(B)) / B
    assert induction_score(w, batch)[0].item() == pytest.approx(expected)


def test_scores_refuse_weights_of_the_wrong_shape():
    batch = batch_of(B=2)
    with pytest.raises(ValueError, match=r"\[B, H, T, T\]"):
        previous_token_score(torch.rand(2, 64, 64))
    with pytest.raises(ValueError, match="tokens have shape"):
        induction_score(torch.rand(3, 4, 64, 64), batch)


def forward_by_hand(model: AttentionOnly, tokens, zero=(), remove=(), path=None,
                    contributions=None):
    """The model's forward pass written out head by head, with the heads in ``zero`` left out.

    ``remove`` and ``path``: those heads' outputs are subtracted from that input ("query",
    "key" or "value") of layer 1 only. ``contributions``: a list that receives, per layer and
    head, what the head adds to the residual stream ``[B, T, D]``.
    """
    x = model.embed(tokens)
    if model.pos is not None:
        x = x + model.pos.weight[: tokens.shape[1]]
    T = tokens.shape[1]
    allowed = torch.ones(T, T).tril().bool()
    added = {}  # (layer, head) -> [B, T, D]
    for layer, (norm, attn) in enumerate(zip(model.norms, model.attns)):
        inputs = {"query": x, "key": x, "value": x}
        if layer == 1 and remove:
            inputs[path] = x - sum(added[lh] for lh in remove)
        d_k = attn.head_dim
        heads = []
        for h in range(model.num_heads):
            cols = slice(h * d_k, (h + 1) * d_k)
            q = norm(inputs["query"]) @ attn.q_proj.weight[cols].T + attn.q_proj.bias[cols]
            k = norm(inputs["key"]) @ attn.k_proj.weight[cols].T + attn.k_proj.bias[cols]
            v = norm(inputs["value"]) @ attn.v_proj.weight[cols].T + attn.v_proj.bias[cols]
            if model.positions == "rope":
                q, k = apply_rope(q, torch.arange(T)), apply_rope(k, torch.arange(T))
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(d_k)
            a = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
            heads.append(torch.zeros_like(v) if (layer, h) in zero else a @ v)
            added[layer, h] = heads[-1] @ attn.o_proj.weight[:, cols].T
        if contributions is not None:
            contributions.append([added[layer, h] for h in range(model.num_heads)])
        x = x + F.linear(torch.cat(heads, dim=-1), attn.o_proj.weight, attn.o_proj.bias)
    return model.unembed(model.final_norm(x))


@pytest.mark.parametrize("positions", ["rope", "learned"])
@pytest.mark.parametrize("zero", [(), ((0, 1),), ((1, 3),), ((0, 0), (1, 2))])
def test_ablating_a_head_equals_leaving_it_out_of_the_sum(positions, zero):
    torch.manual_seed(0)
    model = AttentionOnly(vocab_size=11, d_model=16, num_heads=4, num_layers=2, max_len=12,
                          positions=positions)
    for p in model.parameters():  # larger weights than the N(0, 0.02) init: heads matter
        torch.nn.init.normal_(p, std=0.5)
    tokens = torch.randint(11, (3, 12))
    with torch.no_grad(), ablate_heads(model, zero):
        logits, _ = model(tokens)
    expected = forward_by_hand(model, tokens, zero)
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    # and the hooks are gone after the block
    torch.testing.assert_close(model(tokens)[0], forward_by_hand(model, tokens),
                               atol=1e-5, rtol=1e-5)


def test_ablation_table_is_the_loss_increase_per_head():
    torch.manual_seed(0)
    model = AttentionOnly(num_layers=2)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    batch = batch_of(B=8)
    table = ablation_table(model, batch)
    assert table.shape == (2, 4)
    base = evaluate(model, batch)
    assert table[1, 2].item() == pytest.approx(evaluate(model, batch, [(1, 2)]) - base, abs=1e-5)


def test_a_head_that_does_not_exist_is_named_in_the_error():
    with pytest.raises(ValueError, match=r"no head \(2, 0\)"):
        with ablate_heads(AttentionOnly(num_layers=2), [(2, 0)]):
            pass


def test_weights_start_from_a_normal_with_std_002():
    torch.manual_seed(0)
    model = AttentionOnly()
    w = torch.cat([model.embed.weight.flatten(), model.attns[0].q_proj.weight.flatten()])
    assert w.std().item() == pytest.approx(0.02, rel=0.05)
    assert model.attns[0].q_proj.bias.abs().max() == 0


def test_lag_score_finds_a_head_that_looks_a_fixed_distance_back():
    T, lag = 12, 7
    w = causal_uniform(2, 2, T)
    w[:, 1] = 0
    w[:, 1, torch.arange(lag, T), torch.arange(T - lag)] = 1  # head 1: exactly 7 tokens back
    w[:, 1, torch.arange(lag), torch.arange(lag)] = 1  # (earlier queries: themselves)
    scan = lag_scan(w, range(1, 10))  # [9, H]
    assert scan[lag - 1, 1] == pytest.approx(1.0)
    assert scan[[i for i in range(9) if i != lag - 1], 1].abs().max() == 0
    # the uniform head: 1/(t+1) on t - lag, averaged over the queries that have such a key
    expected = sum(1 / (t + 1) for t in range(lag, T)) / (T - lag)
    assert lag_score(w, lag)[0].item() == pytest.approx(expected)
    assert torch.equal(previous_token_score(w), lag_score(w, 1))
    with pytest.raises(ValueError, match="lag must be between 1 and T - 1 = 11; got 12"):
        lag_score(w, 12)


def test_offset_scan_finds_a_shifted_induction_head():
    batch = batch_of(B=3)
    B, T = batch.tokens.shape
    w = causal_uniform(B, 2, T)
    for b in range(B):  # head 1 attends 7 tokens after the earlier occurrence
        s, d, P = int(batch.src[b]), int(batch.dst[b]), int(batch.length[b])
        for i in range(P - 1):
            w[b, 1, d + i] = 0
            w[b, 1, d + i, s + i + 7] = 1
    scan = offset_scan(w, batch, range(0, 10))
    assert scan[7, 1] == pytest.approx(1.0) and scan[1, 1] == 0  # textbook offset: nothing
    assert torch.equal(scan[1], induction_score(w, batch))


def test_uniform_weights_give_the_baselines_of_the_scores():
    batch = batch_of(B=5)
    w = uniform_causal_weights(5, 64)
    assert w.shape == (5, 1, 64, 64)
    torch.testing.assert_close(w.sum(-1), torch.ones(5, 1, 64))
    assert previous_token_score(w).item() == pytest.approx(
        sum(1 / (t + 1) for t in range(1, 64)) / 63)
    torch.testing.assert_close(induction_score(w, batch), induction_score(causal_uniform(5, 1, 64), batch))


def trained_looking_model(seed=0):
    torch.manual_seed(seed)
    model = AttentionOnly(vocab_size=11, d_model=16, num_heads=4, num_layers=2, max_len=12)
    for p in model.parameters():  # larger weights than the N(0, 0.02) init: heads matter
        torch.nn.init.normal_(p, std=0.5)
    return model.eval()


def test_head_outputs_are_what_each_head_adds_to_the_residual_stream():
    model = trained_looking_model()
    tokens = torch.randint(11, (3, 12), generator=torch.Generator().manual_seed(2))
    logits, outputs = run_with_head_outputs(model, tokens)
    by_hand = []
    expected = forward_by_hand(model, tokens, contributions=by_hand)
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    for layer in range(2):
        for h in range(4):
            torch.testing.assert_close(outputs[layer][:, :, h], by_hand[layer][h],
                                       atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("path", ["query", "key", "value"])
def test_removing_a_head_from_one_input_of_layer_1_changes_only_that_input(path):
    model = trained_looking_model(1)
    tokens = torch.randint(11, (3, 12), generator=torch.Generator().manual_seed(3))
    remove = [(0, 1), (0, 3)]
    logits, _ = run_with_head_outputs(model, tokens, remove, path)
    expected = forward_by_hand(model, tokens, remove=remove, path=path)
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(logits, model(tokens)[0], atol=1e-3)  # it does change something


def test_path_ablation_refuses_heads_that_layer_1_cannot_read_and_unknown_paths():
    model = AttentionOnly(num_layers=2)
    batch = batch_of(B=2)
    with pytest.raises(ValueError, match=r"head \(1, 0\) cannot be removed from layer 1"):
        path_ablated_loss(model, batch, [(1, 0)], "key")
    with pytest.raises(ValueError, match="path must be"):
        path_ablated_loss(model, batch, [(0, 0)], "keys")


def test_path_ablated_loss_is_the_copy_loss_of_the_path_ablated_model():
    torch.manual_seed(0)
    model = AttentionOnly(num_layers=2)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    batch = batch_of(B=4)
    with torch.no_grad():
        expected = copy_loss(forward_by_hand(model, batch.tokens, remove=[(0, 2)], path="key"), batch)
    assert path_ablated_loss(model, batch, [(0, 2)], "key") == pytest.approx(expected.item(), abs=1e-5)


def test_direct_logit_accuracy_reads_each_heads_output_through_the_frozen_final_norm():
    torch.manual_seed(0)
    model = AttentionOnly(num_layers=2)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    batch = batch_of(B=4)
    by_hand = []
    with torch.no_grad():
        forward_by_hand(model, batch.tokens, contributions=by_hand)
    gain, W_U = model.final_norm.weight, model.unembed.weight
    expected = torch.zeros(2, 4)
    count = 0
    for b in range(4):  # one prediction at a time: positions dst .. dst + P - 2
        d, P = int(batch.dst[b]), int(batch.length[b])
        for t in range(d, d + P - 1):
            count += 1
            for layer in range(2):
                for h in range(4):
                    c = by_hand[layer][h][b, t]
                    logits = W_U @ ((c - c.mean()) * gain)
                    expected[layer, h] += float(logits.argmax() == batch.tokens[b, t + 1])
    torch.testing.assert_close(direct_logit_accuracy(model, batch), expected / count)


def test_direct_logit_accuracy_is_one_for_a_head_that_writes_the_next_token():
    """A 1-layer model whose head 0 attends to the token itself and writes its embedding,
    read by an output layer equal to the embedding: on a sequence that predicts its own
    token (all copies of one token) it ranks the right token first every time."""
    torch.manual_seed(0)
    model = AttentionOnly(vocab_size=8, d_model=8, num_heads=2, num_layers=1, max_len=64).eval()
    with torch.no_grad():
        model.embed.weight.copy_(torch.eye(8) * 5)
        model.unembed.weight.copy_(torch.eye(8))
        attn = model.attns[0]
        for proj in (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj):
            proj.weight.zero_(); proj.bias.zero_()
        attn.v_proj.weight[:4, :4] = torch.eye(4)  # head 0 (columns 0..3) reads tokens 0..3
        attn.o_proj.weight[:4, :4] = torch.eye(4)  # and writes them back where they came from
    tokens = torch.tensor([[2] * 64])
    batch = CopyBatch(tokens, torch.tensor([0]), torch.tensor([20]), torch.tensor([16]))
    accuracy = direct_logit_accuracy(model, batch)
    assert accuracy[0, 0] == 1.0 and accuracy[0, 1] == 0.0


def test_loss_by_position_in_the_copy_is_each_tokens_cross_entropy():
    batch = batch_of(B=4)
    torch.manual_seed(0)
    model = AttentionOnly(num_layers=2)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        logits, _ = model(batch.tokens)
    n = int(batch.length.min())
    expected = torch.zeros(n)
    for b in range(4):
        d = int(batch.dst[b])
        for i in range(n):  # token d + i, predicted from position d + i - 1
            expected[i] += F.cross_entropy(logits[b, d + i - 1], batch.tokens[b, d + i]) / 4
    torch.testing.assert_close(copy_loss_by_position(model, batch), expected)


def test_scores_over_training_score_each_snapshot_and_the_end():
    batch = batch_of(B=6)
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(AttentionOnly(num_layers=2))
        for p in models[-1].parameters():
            torch.nn.init.normal_(p, std=0.3)
    run = TrainResult(models[2].eval(), losses=[0.0] * 50,
                      snapshots={0: models[0].state_dict(), 25: models[1].state_dict()})
    got = scores_over_training(run, batch, lags=(1, 3), offsets=(0, 1))
    assert got["steps"].tolist() == [0, 25, 50]
    for k, m in enumerate(models):
        with torch.no_grad():
            _, weights = m.eval()(batch.tokens, need_weights=True)
        for layer in range(2):
            torch.testing.assert_close(got["lag"][k, 1, layer], lag_score(weights[layer], 3))
            torch.testing.assert_close(got["offset"][k, 1, layer],
                                       induction_score(weights[layer], batch))
    assert torch.equal(run.model.state_dict()["embed.weight"], models[2].state_dict()["embed.weight"])


# ------------------------------------------------------------------ exercise 16's model

@pytest.mark.slow
def test_the_shipped_exercise_weights_are_what_the_recipe_trains():
    """The weights in the package are exercise 16's recipe (seed, steps, settings) run
    again here; after a change to the recipe or the model, `python -m mha.course.induction`
    writes them anew."""
    rng, threads = torch.random.get_rng_state(), torch.get_num_threads()
    trained = train_exercise_weights()
    assert torch.equal(torch.random.get_rng_state(), rng) and torch.get_num_threads() == threads
    shipped = torch.load(EXERCISE_WEIGHTS, weights_only=True)
    assert trained.keys() == shipped.keys()
    for name in shipped:
        torch.testing.assert_close(trained[name], shipped[name], rtol=0, atol=1e-4, msg=name)


# The sha256 of the shifted model's file, written by `python -m mha.course.induction shifted`
# (seed 15, 800 steps) when its premises (below) were measured. Re-running its recipe costs about
# 45 s of CPU, more than this suite's budget allows: the slow test above re-runs the first model's
# recipe, the same code (`train_exercise_weights`, `train`); this pins the second model's file to
# the one whose premises were checked, and MHA_RETRAIN_EXERCISE_MODELS=1 re-runs its recipe too.
SHIFTED_SHA256 = "ea64bde155d74408b60cb3b38de2a37b87ac6be4251a283bbc1543b57b5ad42d"


def test_the_shipped_shifted_weights_are_the_file_whose_premises_were_checked():
    seed, steps, path = EXERCISE_MODELS["shifted"]
    assert (seed, steps) == (15, 800), "a new recipe: write the file anew, check it, update the hash"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHIFTED_SHA256, (
        f"{path.name} is not the file whose premises were checked: after "
        f"`python -m mha.course.induction shifted`, run this file's tests and update SHIFTED_SHA256")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MHA_RETRAIN_EXERCISE_MODELS"),
                    reason="about 45 s of CPU: set MHA_RETRAIN_EXERCISE_MODELS=1 to run it")
def test_the_shipped_shifted_weights_are_what_the_recipe_trains():
    trained = train_exercise_weights("shifted")
    shipped = torch.load(EXERCISE_MODELS["shifted"][2], weights_only=True)
    assert trained.keys() == shipped.keys()
    for name in shipped:
        torch.testing.assert_close(trained[name], shipped[name], rtol=0, atol=1e-4, msg=name)


@pytest.mark.parametrize("name", ["induction", "shifted"])
def test_the_exercise_model_is_loaded_once_and_handed_out_as_separate_copies(name):
    rng, threads = torch.random.get_rng_state(), torch.get_num_threads()
    first, second = exercise_model(name), exercise_model(name)
    # neither the loading nor the copies draw from the caller's generator or change its threads
    assert torch.equal(torch.random.get_rng_state(), rng) and torch.get_num_threads() == threads
    assert first is not second and not first.training and not second.training
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    with torch.no_grad():  # a learner who changes their copy changes no other
        first.attns[1].o_proj.weight.zero_()
    assert not torch.equal(first.attns[1].o_proj.weight, second.attns[1].o_proj.weight)
    assert torch.equal(exercise_model(name).attns[1].o_proj.weight, second.attns[1].o_proj.weight)


@pytest.mark.parametrize("name", ["induction", "shifted"])
def test_a_measurement_of_the_exercise_model_is_the_one_the_functions_give_on_that_batch(name):
    model, batch = exercise_model(name), batch_of(seed=16, B=32)
    measured = measure_exercise_model(32, seed=16, name=name)
    expected = head_scores(model, batch)
    assert measured.scores.keys() == expected.keys()
    for key in expected:
        torch.testing.assert_close(measured.scores[key], expected[key], rtol=0, atol=0)
    torch.testing.assert_close(measured.ablation, ablation_table(model, batch), rtol=0, atol=0)
    assert measured.loss == evaluate(model, batch)


def test_a_measurement_is_made_once_and_handed_out_as_copies():
    rng = torch.random.get_rng_state()
    first = measure_exercise_model(32, seed=5)
    assert torch.equal(torch.random.get_rng_state(), rng)  # no draw from the caller's generator
    first.ablation.zero_()  # what a caller does to one result changes no other
    first.scores["induction"].zero_()
    second = measure_exercise_model(32, seed=5)
    assert second.ablation.abs().sum() > 0 and second.scores["induction"].abs().sum() > 0
    assert not torch.equal(measure_exercise_model(32, seed=6).ablation, second.ablation)


def test_the_default_exercise_model_is_the_induction_one_and_an_unknown_name_is_refused():
    assert torch.equal(exercise_model().embed.weight, exercise_model("induction").embed.weight)
    assert not torch.equal(exercise_model().embed.weight, exercise_model("shifted").embed.weight)
    with pytest.raises(ValueError, match="no exercise model 'textbook'"):
        exercise_model("textbook")


def test_the_exercise_model_has_the_circuit_the_exercise_asks_about():
    """Exercise 16's premises, measured: a previous-token head in layer 0 whose removal is the
    costliest, an induction head in layer 1, and (question 4's answer "c") removing the
    previous-token head lowers layer 1's best induction score by more than 0.1 but not below 0.15."""
    model = exercise_model()
    batch = batch_of(seed=16, B=64)
    assert evaluate(model, batch) < 1.0  # ln 64 = 4.16 before the phase change
    scores, table = head_scores(model, batch), ablation_table(model, batch)
    previous = int(scores["previous_token"][0].argmax())
    assert scores["previous_token"][0, previous] > 0.6 and int(table[0].argmax()) == previous
    assert table[0, previous] == table.max()
    best = scores["induction"][1].max().item()
    assert best > 0.7 and int(scores["induction"][1].argmax()) == int(table[1].argmax())
    with torch.no_grad(), ablate_heads(model, [(0, previous)]):
        _, weights = model(batch.tokens, need_weights=True)
    after = induction_score(weights[1], batch).max().item()
    assert 0.15 <= after < best - 0.1


def test_the_shifted_exercise_model_has_the_circuit_question_5_asks_about():
    """Exercise 16's question 5, measured: the shifted model copies, its scores at distance 1
    find nothing (below a head that attends evenly to the whole past), and chapter 15's scans
    find its circuit at other distances, with answers that do not hang on the batch: layer 0's
    highest lag score at lag 5, layer 1's highest offset score at offset 6, all four heads of
    layer 1 above 0.5 there, and their joint removal costs more than the sum of their costs
    alone (the hint `summed_alone` can tell the two apart)."""
    model = exercise_model("shifted")
    for seed, B in [(16, 64), (164, 256)]:  # the notebook's batch, and others
        batch = batch_of(seed=seed, B=B)
        base = evaluate(model, batch)
        assert base < 1.0
        uniform = uniform_causal_weights(*batch.tokens.shape)
        with torch.no_grad():
            _, weights = model(batch.tokens, need_weights=True)
        assert previous_token_score(weights[0]).max() < previous_token_score(uniform).item()
        assert induction_score(weights[1], batch).max() < induction_score(uniform, batch).item()
        lags = lag_scan(weights[0], range(1, 17))
        offsets = offset_scan(weights[1], batch, range(1, 17))
        best_lags = lags.max(dim=1).values.sort(descending=True)
        assert int(best_lags.indices[0]) + 1 == 5 and best_lags.values[0] > best_lags.values[1] + 0.02
        best_offsets = offsets.max(dim=1).values.sort(descending=True)
        assert int(best_offsets.indices[0]) + 1 == 6 and best_offsets.values[1] < 0.1
        assert (offsets[5] > 0.6).all()  # offset 6: every head of layer 1, well above 0.5
        heads = [(1, h) for h in range(4)]
        together = evaluate(model, batch, heads) - base
        alone = ablation_table(model, batch)[1]
        assert together > 3 and together > alone.sum() + 0.5
