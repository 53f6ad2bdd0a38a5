"""Exercise 12, beam search: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q5": {
        "extends_finished": {
            "seen": "the totals equal those of beam_step with the finished hypotheses extended like the others",
            "en": "the finished hypotheses were extended by every token: a hypothesis that has ended takes no further real token, it is only carried over.",
            "zh": "已结束的假设被每个词元扩展了：一个已经结束的假设不再接受真正的新词元，它只是被原样带到下一步。",
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
