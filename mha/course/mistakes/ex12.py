"""Exercise 12, beam search: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q1": {
        "packed_by_k": {
            "seen": "the parents equal the flat index modulo K (the packing undone as t * K + k)",
            "en": "you undid the packing as if the flat index were t * K + k. The reshape puts each hypothesis's V extensions side by side, so the index is k * V + t: which integer operations give k and t back from it?",
            "zh": "你按 t * K + k 的方式拆开了扁平下标。reshape 把每个假设的 V 个扩展并排放在一起，所以下标是 k * V + t：用哪些整数运算能从它还原出 k 和 t？",
        },
    },
    "q2": {
        "identical_start": {
            "seen": "a beam of 2 returns the greedy sequence where the real beam finds a better one (the search starts from K identical empty hypotheses)",
            "en": "your beam of 2 finds only what greedy decoding finds: if it starts from K identical empty hypotheses, the K best extensions are copies of one and every later step keeps copies. The search starts from a single empty hypothesis.",
            "zh": "你宽度为 2 的束只找到了贪心解码找到的序列：如果搜索从 K 个相同的空假设开始，最好的 K 个扩展就是同一个扩展的副本，之后每一步保留的也都是副本。搜索应当从一个空假设开始。",
        },
    },
    "q5": {
        "extends_finished": {
            "seen": "the totals equal those of beam_step with the finished hypotheses extended like the others",
            "en": "the finished hypotheses were extended by every token: a hypothesis that has ended takes no further real token, it is only carried over.",
            "zh": "已结束的假设被每个词元扩展了：一个已经结束的假设不再接受真正的新词元，它只是被原样带到下一步。",
        },
        "also_extended": {
            "seen": "a finished hypothesis is carried over with eos for free and also extended by the other tokens",
            "en": "a finished hypothesis was carried over and also extended by the other tokens: once it has ended, eos again (for free) is its only extension; every other continuation of it must be impossible.",
            "zh": "已结束的假设既被原样带到下一步，又被其他词元扩展了：一个假设结束之后，它唯一的扩展就是再接一个 eos（不需要代价）；它的其他任何延续都必须是不可能的。",
        },
        "drops_finished": {
            "seen": "the totals equal those of the unfinished hypotheses' extensions alone",
            "en": "the finished hypotheses vanished from the beam: one that has ended must keep competing with the others, with its total as it is.",
            "zh": "已结束的假设从束中消失了：一个已经结束的假设必须继续与其他假设竞争，总分保持不变。",
        },
        "pays_eos_again": {
            "seen": "the totals equal those of finished hypotheses charged the log-probability of eos once more",
            "en": "a finished hypothesis paid for its end token again: carrying it over costs nothing, so its total must not change from one step to the next.",
            "zh": "已结束的假设又为它的结束词元付了一次代价：把它带到下一步不需要任何代价，所以它的总分在各步之间不能改变。",
        },
    },
}
