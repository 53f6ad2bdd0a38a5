"""Exercise 8, what do the heads do: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q4": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
        "tiled_groups": {
            "seen": "the output equals attention over the key/value heads tiled ([k0, k1, k0, k1, ...]) instead of grouped",
            "en": "query head h was paired with key/value head h % H_kv: the groups are made of NEIGHBOURING query heads, so heads 0 .. group-1 all read key/value head 0. Check how your reshape orders the query heads.",
            "zh": "查询头 h 被配给了键/值头 h % H_kv：分组由**相邻的**查询头组成，所以头 0 .. group-1 都读取键/值头 0。请检查你的变形是按什么顺序排列查询头的。",
        },
    },
    "q5": {
        "one_query_head": {
            "seen": "the output equals the layer's with only query head kv_head switched off",
            "en": "only one query head was switched off: a key/value head is read by a whole group of query heads, and every one of them loses its values.",
            "zh": "只关掉了一个查询头：一个键/值头被一整组查询头读取，而这一组中的每个头都会失去它的值。",
        },
        "tiled_group": {
            "seen": "the output equals the layer's with query heads kv_head, kv_head + H_kv, ... switched off",
            "en": "the query heads switched off are every H_kv-th one: the query heads that share a key/value head are neighbours, group of them in a row.",
            "zh": "被关掉的是每隔 H_kv 个的查询头：共享同一个键/值头的查询头是相邻的，连续的 group 个。",
        },
    },
}
