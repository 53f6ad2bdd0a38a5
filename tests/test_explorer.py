"""Specifications of mha.course.explorer: the data it inlines, and that it needs no network.

The interaction itself (the matrix view, choosing a head or a query, hover, the keyboard, the
Chinese interface, axe-core) is checked in a real browser by
tests/browser/test_explorer_offline.py, on a page written from show_attention and on the built
chapter 15.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

import mha
from mha.course.explorer import explore, show_attention
from mha.course.induction import AttentionOnly


def inlined_data(view) -> dict:
    html = view._repr_html_()
    found = re.search(r'<script type="application/json">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def causal_weights(layers=2, heads=3, T=5, seed=0):
    scores = torch.randn(layers, heads, T, T, generator=torch.Generator().manual_seed(seed))
    return torch.softmax(scores.masked_fill(~mha.causal_mask(T), float("-inf")), dim=-1)


def test_the_inlined_weights_are_the_given_ones_rounded_causal_rows_cut_at_the_query():
    w = causal_weights()
    data = inlined_data(show_attention(w, list("abcde")))
    assert data["tokens"] == list("abcde")
    assert data["layers"] == ["layer 0", "layer 1"] and data["heads"] == ["head 0", "head 1", "head 2"]
    for l in range(2):
        for h in range(3):
            for t in range(5):
                row = data["weights"][l][h][t]
                assert len(row) == t + 1  # keys after the query carry no weight: left out
                assert row == pytest.approx(w[l, h, t, : t + 1].tolist(), abs=5e-4)


def test_non_causal_rows_are_kept_whole():
    w = torch.softmax(torch.randn(2, 4, 4), dim=-1)  # [H, T, T], e.g. an encoder
    data = inlined_data(show_attention(w, ["w", "x", "y", "z"]))
    assert [len(r) for r in data["weights"][0][1]] == [4, 4, 4, 4]
    assert data["layers"] == ["layer 0"]


def test_a_list_of_per_layer_batches_is_accepted_and_other_shapes_refused():
    w = causal_weights(layers=2, heads=2, T=3)
    per_layer = [w[0][None], w[1][None]]  # what a model returns: [1, H, T, T] per layer
    assert inlined_data(show_attention(per_layer, "abc"))["weights"] == \
        inlined_data(show_attention(w, "abc"))["weights"]
    with pytest.raises(ValueError, match="pick one"):
        show_attention([torch.rand(2, 2, 3, 3)], "abc")
    with pytest.raises(ValueError, match="3 tokens for weights over 4 positions"):
        show_attention(torch.rand(4, 4), "abc")
    with pytest.raises(ValueError, match=r"\[T, T\], \[H, T, T\]"):
        show_attention(torch.rand(2, 3, 4), "abc")


def test_the_page_needs_no_network_and_escapes_token_text():
    html = show_attention(causal_weights(1, 1, 3), ["<b>", "</script>", "&"])._repr_html_()
    assert not re.search(r"(src|href)\s*=", html), "nothing may be loaded from elsewhere"
    assert "http://" not in html and "https://" not in html
    assert html.count("</script>") == 2  # the JSON's and the code's: a token cannot end one early
    assert inlined_data(show_attention(causal_weights(1, 1, 3), ["<b>", "</script>", "&"]))[
        "tokens"] == ["<b>", "</script>", "&"]


def test_each_view_gets_its_own_id_and_the_script_is_the_package_file():
    a, b = show_attention(torch.eye(2), "ab"), show_attention(torch.eye(2), "ab")
    ids = [re.search(r'id="([^"]+)"', v._repr_html_()).group(1) for v in (a, b)]
    assert ids[0] != ids[1]
    script = (Path(mha.course.__file__).parent / "explorer.js").read_text(encoding="utf-8")
    assert script in a._repr_html_()


def test_explore_shows_the_models_own_weights():
    torch.manual_seed(0)
    model = AttentionOnly(vocab_size=10, d_model=16, num_heads=2, num_layers=2, max_len=6)
    tokens = torch.tensor([[1, 2, 3, 1, 2, 3]])
    with torch.no_grad():
        _, weights = model(tokens, need_weights=True)
    data = inlined_data(explore(model, tokens, query=4))
    assert data["query"] == 4 and data["tokens"] == ["1", "2", "3", "1", "2", "3"]
    assert data["weights"][1][0][5] == pytest.approx(weights[1][0, 0, 5].tolist(), abs=5e-4)


def test_spans_are_inlined_and_impossible_ones_refused():
    view = show_attention(causal_weights(1, 1, 5), list("abcde"), spans=[(0, 1, "segment"), (3, 4, "copy")])
    assert inlined_data(view)["spans"] == [[0, 1, "segment"], [3, 4, "copy"]]
    with pytest.raises(ValueError, match=r"span 'copy' covers positions 3..5, but the sequence has positions 0..4"):
        show_attention(causal_weights(1, 1, 5), list("abcde"), spans=[(3, 5, "copy")])
    with pytest.raises(ValueError, match="a span is"):
        show_attention(causal_weights(1, 1, 5), list("abcde"), spans=[(3, 4)])


def test_a_query_outside_the_sequence_is_refused():
    with pytest.raises(ValueError, match=r"query 5 is not a position of the 5 tokens \(0..4\)"):
        show_attention(causal_weights(1, 1, 5), list("abcde"), query=5)


def test_the_interface_speaks_the_language_the_course_was_set_to():
    from mha.course import plotting
    from mha.course.explorer import INTERFACE

    assert INTERFACE["en"].keys() == INTERFACE["zh"].keys()
    english = show_attention(causal_weights(), list("abcde"))._repr_html_()
    assert ">Layer <select" in english and "head 1" in english
    plotting.use_language("zh")
    try:
        chinese = show_attention(causal_weights(), list("abcde"))
        html = chinese._repr_html_()
    finally:
        plotting.use_language("en")
    data = inlined_data(chinese)
    assert data["words"] == INTERFACE["zh"] and data["heads"][1] == "头 1"
    assert data["layers"] == ["第 0 层", "第 1 层"] and 'lang="zh-CN"' in html
    for word in ("Layer", "Head", "attends most to", "attention weight", "needs JavaScript"):
        assert word not in html.replace(_script_text(), ""), word
    with pytest.raises(ValueError, match="language must be one of"):
        show_attention(torch.eye(2), "ab", language="fr")


def _script_text():
    return (Path(mha.course.__file__).parent / "explorer.js").read_text(encoding="utf-8")


def test_every_text_the_script_shows_is_in_the_interface_table():
    from mha.course.explorer import INTERFACE

    used = set(re.findall(r"words\.(\w+)", _script_text()))
    assert used and used <= INTERFACE["en"].keys(), used - INTERFACE["en"].keys()
