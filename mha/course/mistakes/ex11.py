"""Exercise 11, the language-model loss and sampling: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q5": {
        "mean_of_means": {
            "seen": "the loss equals the mean over the texts of each text's own mean loss",
            "en": "this is the mean of each text's mean: a short text then weighs as much as a long one. Every real prediction must weigh the same, whichever text it belongs to.",
            "zh": "这是各段文本平均损失的平均：这样一段短文本和一段长文本的权重一样。每一个真实的预测都必须同等加权，不论它属于哪段文本。",
        },
        "padding_counted": {
            "seen": "the loss equals the mean over every position, the padded ones included",
            "en": "the predictions of padding tokens are averaged in too: a prediction counts only when the token it predicts lies inside its text's length.",
            "zh": "对填充词元的预测也被算进了平均：只有当被预测的词元位于它所在文本的长度之内时，这个预测才算数。",
        },
    },
}
