"""Exercise 13, positions: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
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
