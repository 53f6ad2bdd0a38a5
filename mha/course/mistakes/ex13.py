"""Exercise 13, positions: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q1": {
        "exponent_i": {
            "seen": "the output equals the rotation with theta_i = base^(-i/d), i the pair index, instead of base^(-2i/d)",
            "en": "your frequencies fall too slowly: pair i (i = 0, 1, 2, ...) turns with base to the power -2i/d, so that the last pair turns nearly base times slower than the first; with the exponent -i/d it is only the square root of base times slower.",
            "zh": "你的频率下降得太慢了：第 i 对（i = 0、1、2……）的频率是 base 的 -2i/d 次方，所以最后一对转得比第一对慢将近 base 倍；指数写成 -i/d 时，只慢 base 的平方根倍。",
        },
    },
    "q2": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
    },
    "q4": {
        "whole_width": {
            "seen": "the weight equals the original with its rows reordered over the whole width H * d, not head by head",
            "en": "the rows were reordered across the whole width: the pairs are formed inside each head, so the new order must be applied to every head's own block of d rows.",
            "zh": "行是在整个宽度上重新排序的：特征对是在每个头内部组成的，所以新的顺序必须分别作用在每个头自己的那 d 行上。",
        },
        "inverse": {
            "seen": "the weight equals the original with each head's rows put in the inverse order",
            "en": "this is the inverse reordering: it takes a rotate-half head to the interleaved layout. Ask which old feature must land at new position i.",
            "zh": "这是相反的重排：它把旋转一半布局的头变成了交错布局。想一想：哪个旧特征必须落到新的位置 i 上？",
        },
        "columns": {
            "seen": "the weight equals the original with its input columns reordered",
            "en": "the input columns were reordered: the rotation acts on the projection's OUTPUT features, the rows of an nn.Linear weight.",
            "zh": "被重排的是输入列：旋转作用在投影的*输出*特征上，也就是 nn.Linear 权重的行。",
        },
    },
    "q5": {
        "swapped": {
            "seen": "the result equals the reference with the rows and the columns exchanged",
            "en": "rows and columns are exchanged: the first half of the features carries the row, the second half the column.",
            "zh": "行和列弄反了：前一半特征承载行，后一半特征承载列。",
        },
        "summed": {
            "seen": "the result equals RoPE over all the features at the position row + column",
            "en": "one position row + column for all the features cannot tell (1, 0) from (0, 1): each direction needs features of its own.",
            "zh": "对所有特征只用一个位置 row + column，就区分不了 (1, 0) 和 (0, 1)：每个方向都需要自己的一组特征。",
        },
    },
}
