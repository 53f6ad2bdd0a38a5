"""Exercise 6, LayerNorm and BatchNorm: the classic mistakes of its thought questions.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q5": {
        "inverted": {
            "seen": "the result is True exactly where the output did not change",
            "en": "your tensor is True for the tokens that stayed the same: it must be True where the output changed.",
            "zh": "你的张量在保持不变的词元处为 True：它应当在输出发生变化的地方为 True。",
        },
        "signed": {
            "seen": "only the token moved in one direction is found (the difference is not taken in absolute value)",
            "en": "you find the token whose output went up but not the one whose output went down: a change can have either sign, so compare its size with the tolerance.",
            "zh": "你找到了输出变大的词元，却没有找到输出变小的词元：变化可正可负，要拿它的大小与容差比较。",
        },
    },
    "q6": {
        "interleaved": {
            "seen": "the result equals GroupNorm over groups of every G-th feature",
            "en": "your groups take every G-th feature; a group is a run of consecutive features (features 0 .. D/G - 1 form group 0). Check which of the two new axes of your reshape holds the groups.",
            "zh": "你的分组取的是每隔 G 个的特征；一组应是一段连续的特征（特征 0 .. D/G - 1 是第 0 组）。请检查 reshape 后两个新轴中哪一个是组。",
        },
        "unbiased": {
            "seen": "the result equals GroupNorm with the unbiased variance",
            "en": "the variance must be the biased one: divide by the number of features in the group, not by one less (torch's default).",
            "zh": "方差必须是有偏方差：除以组内特征的个数，而不是个数减一（torch 的默认做法）。",
        },
        "across_groups": {
            "seen": "the result equals statistics taken across the groups (one per position inside a group)",
            "en": "your statistics mix the groups: each group's mean and variance come from its own D/G features, not from the same position in every group.",
            "zh": "你的统计量把各组混在了一起：每组的均值和方差只来自它自己的 D/G 个特征，而不是各组中相同位置的特征。",
        },
    },
    "q7": {
        "scaled_rows": {
            "seen": "W_folded equals W with its rows (input features) scaled",
            "en": "BatchNorm scales the output features, the columns of W (its second axis); you scaled the rows, the input features.",
            "zh": "BatchNorm 缩放的是输出特征，即 W 的列（第二个轴）；你缩放的是行，即输入特征。",
        },
        "mean_kept": {
            "seen": "b_folded equals b * scale + bias: the running mean is not subtracted",
            "en": "the folded bias forgets the running mean: in evaluation mode BatchNorm first subtracts running_mean from x @ W + b, then scales.",
            "zh": "折叠后的偏置漏掉了滑动均值：评估模式下 BatchNorm 先从 x @ W + b 中减去 running_mean，再缩放。",
        },
        "no_eps": {
            "seen": "the scale is weight / sqrt(running_var), without eps",
            "en": "eps is missing from the scale: BatchNorm divides by the square root of the variance plus eps, and for a feature of tiny variance the difference is large.",
            "zh": "缩放中漏掉了 eps：BatchNorm 除以的是方差加 eps 的平方根，对方差很小的特征，差别很大。",
        },
    },
}
