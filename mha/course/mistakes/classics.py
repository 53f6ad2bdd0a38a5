"""The classic mistakes of attention that several exercises recognise in the same words.

An exercise's data file uses these where its question computes attention the usual way, and
writes its own entry where the question needs other words (as exercises 1-3 do).
"""

NO_SCALE = {
    "seen": "the result equals the reference's without the 1/sqrt(d_k) scale",
    "en": "the scores are not scaled: each dot product is divided by the square root of the key width d_k of one head, so that the softmax does not saturate as d_k grows.",
    "zh": "分数没有缩放：每个点积都要除以一个头的键宽度 d_k 的平方根，这样 softmax 才不会随 d_k 增大而饱和。",
}
SOFTMAX_AXIS = {
    "seen": "the result equals the reference's with the softmax over the queries",
    "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
    "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
}
