"""The plotting helpers draw what they are given and reject what they cannot draw."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mha.course.plotting import plot_attention, plot_heads, plot_mask  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_attention_shows_the_weights_with_token_labels():
    weights = torch.softmax(torch.randn(3, 4), -1)
    ax = plot_attention(weights, ["a", "b", "c"], ["w", "x", "y", "z"])
    np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert len(ax.texts) == 12  # small matrices are annotated cell by cell


def test_plot_heads_draws_one_panel_per_head():
    fig = plot_heads(torch.softmax(torch.randn(6, 3, 5), -1), ncols=4)
    drawn = [ax for ax in fig.axes if ax.images]
    assert len(drawn) == 6
    assert [ax.get_title() for ax in drawn] == [f"head {h}" for h in range(6)]


def test_plot_mask_marks_allowed_cells():
    mask = torch.tensor([[True, False], [True, True]])
    ax = plot_mask(mask)
    assert [t.get_text() for t in ax.texts] == ["✓", "·", "✓", "✓"]


@pytest.mark.parametrize("plot, shape", [(plot_attention, (2, 3, 4)), (plot_heads, (3, 4)),
                                         (plot_mask, (5,))])
def test_wrong_rank_is_a_clear_error(plot, shape):
    with pytest.raises(ValueError, match="expects"):
        plot(torch.ones(shape))


@pytest.mark.parametrize("style", ["normal", "italic"])
def test_chinese_text_has_a_font_with_han_glyphs_in_every_style(style):
    # Chapter 5's block diagram writes its note in italics; a CJK font has no italic face.
    import warnings

    from mha.course import plotting

    if plotting.cjk_font() is None:
        pytest.skip("no CJK font installed")
    try:
        plotting.use_language("zh")
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, "整个堆叠最后还有一个层归一化", style=style)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*missing from font")
            fig.canvas.draw()
    finally:
        plotting.use_language("en")


def test_a_bold_chinese_title_draws_without_a_font_weight_warning(caplog):
    # Chapter 6's figure has bold titles; the CJK font has one weight. Only that warning goes:
    # a font family matplotlib cannot find is still reported.
    import logging

    from matplotlib import font_manager

    from mha.course import plotting

    if plotting.cjk_font() is None:
        pytest.skip("no CJK font installed")
    try:
        plotting.use_language("zh")
        fig, ax = plt.subplots()
        # a size no other test asks for: matplotlib caches each font lookup, and warns once
        fig.suptitle("层归一化：一组是一个词元的特征", weight="bold", fontsize=13.25)
        with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
            fig.canvas.draw()
            font_manager.fontManager.findfont(font_manager.FontProperties(family="No Such Font Sans"))
        messages = [r.getMessage() for r in caplog.records]
        assert not [m for m in messages if "font weight" in m], messages
        assert [m for m in messages if "No Such Font Sans" in m], messages
    finally:
        plotting.use_language("en")
        plt.close("all")
