"""The course corpus and its training loop (mha.course.corpus): the documents separated by
``<|endoftext|>`` and encoded as tiktoken encodes them, and which parameters AdamW decays.

The rule (minGPT's): weight decay on the weights of the linear layers, none on biases,
norm gains or embedding tables. The expected groups below are written out by hand for a
one-block model, so the test does not re-run the rule it checks.
"""
import pytest
import torch

from mha import GPT, GPTConfig
from mha.bpe import ENDOFTEXT
from mha.course.corpus import (corpus_ids, corpus_tokenizer, load_corpus, param_groups,
                               split_files, train_lm)


def one_block(style, tie_weights=True):
    torch.manual_seed(0)
    return GPT(GPTConfig(16, 12, 8, 2, 1, 16, style=style, tie_weights=tie_weights))


def group_names(model, groups):
    names = {id(p): name for name, p in model.named_parameters()}  # a tied matrix: first name
    return [{names[id(p)] for p in g["params"]} for g in groups]


def test_gpt2_style_decays_the_matrices_only():
    model = one_block("gpt2")  # tied: tok_embed.weight is also lm_head's weight
    groups = param_groups(model, 0.1)
    assert [g["weight_decay"] for g in groups] == [0.1, 0.0]
    decay, no_decay = group_names(model, groups)
    assert decay == {
        "tok_embed.weight",  # = lm_head.weight, the output layer
        "blocks.0.attn.q_proj.weight", "blocks.0.attn.k_proj.weight",
        "blocks.0.attn.v_proj.weight", "blocks.0.attn.o_proj.weight",
        "blocks.0.mlp.fc.weight", "blocks.0.mlp.proj.weight",
    }
    assert no_decay == {
        "pos_embed.weight",  # a lookup table: rows past the training length get no gradient
        "blocks.0.norm1.weight", "blocks.0.norm1.bias", "blocks.0.norm2.weight", "blocks.0.norm2.bias",
        "norm.weight", "norm.bias",
        "blocks.0.attn.q_proj.bias", "blocks.0.attn.k_proj.bias",
        "blocks.0.attn.v_proj.bias", "blocks.0.attn.o_proj.bias",
        "blocks.0.mlp.fc.bias", "blocks.0.mlp.proj.bias",
    }


def test_untied_llama_style_keeps_the_token_table_out_of_decay():
    model = one_block("llama", tie_weights=False)
    decay, no_decay = group_names(model, param_groups(model, 0.1))
    assert decay == {
        "lm_head.weight",
        "blocks.0.attn.q_proj.weight", "blocks.0.attn.k_proj.weight",
        "blocks.0.attn.v_proj.weight", "blocks.0.attn.o_proj.weight",
        "blocks.0.mlp.gate_proj.weight", "blocks.0.mlp.up_proj.weight", "blocks.0.mlp.down_proj.weight",
    }
    assert no_decay == {"tok_embed.weight", "blocks.0.norm1.weight", "blocks.0.norm2.weight", "norm.weight"}


def test_every_parameter_is_in_exactly_one_group():
    for model in (one_block("gpt2"), one_block("llama", tie_weights=False)):
        listed = [id(p) for g in param_groups(model) for p in g["params"]]
        assert sorted(listed) == sorted(id(p) for p in model.parameters())


def test_position_rows_no_window_reaches_are_left_as_initialised():
    """Training windows of 6 tokens use positions 0-5 of a 12-row table: rows 6-11 get a
    zero gradient every step, so with no decay on the table AdamW leaves them untouched
    (decay alone would shrink them by lr * 0.1 of themselves per step)."""
    model = one_block("gpt2")
    before = model.pos_embed.weight.detach().clone()
    ids = torch.randint(0, 16, (200,), generator=torch.Generator().manual_seed(1))
    train_lm(model, ids, steps=5, batch_size=4, length=6, lr=1e-2, progress=False)
    after = model.pos_embed.weight.detach()
    assert torch.equal(after[6:], before[6:])
    assert not torch.equal(after[:6], before[:6])  # the rows in use did train


# --- the corpus: documents separated by <|endoftext|> -------------------------------------

def tiktoken_of(tokenizer):
    """tiktoken's BPE (Rust) with our tokenizer's ranks, pattern and special tokens: an
    independent encoder of the same vocabulary."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {tokenizer.vocab[i]: i for i in range(256 + len(tokenizer.merges))}
    return tiktoken.Encoding("course", pat_str=tokenizer.pattern, mergeable_ranks=ranks,
                             special_tokens=tokenizer.special_tokens)


def test_the_corpus_tokenizer_ends_with_the_endoftext_token_and_never_merges_into_it():
    tok = corpus_tokenizer(512)
    assert tok.vocab_size == 512 and tok.special_tokens == {ENDOFTEXT: 511}
    merged = [tok.vocab[i] for i in tok.merges.values()]
    assert not any(b"<|" in token or b"|>" in token or b"endoftext" in token for token in merged)


def test_corpus_ids_are_each_document_encoded_with_endoftext_between():
    """The reference builds the ids as nanoGPT does for OpenWebText: each file's text
    encoded alone by tiktoken (encode_ordinary), the end-of-text id between two files."""
    tok = corpus_tokenizer(512)
    enc = tiktoken_of(tok)
    for files, ids in zip(split_files(), corpus_ids(512)):
        expected = []
        for k, f in enumerate(files):
            if k:
                expected.append(enc.eot_token)
            expected.extend(enc.encode_ordinary(f.read_text(encoding="utf-8")))
        assert ids.tolist() == expected
        assert (ids == 511).sum().item() == len(files) - 1  # one separator between two files


def test_the_corpus_text_is_the_files_joined_by_endoftext_and_tiktoken_agrees():
    tok = corpus_tokenizer(512)
    enc = tiktoken_of(tok)
    held_text, held_ids = load_corpus()[1], corpus_ids(512)[1]
    documents = held_text.split(ENDOFTEXT)
    assert documents == [f.read_text(encoding="utf-8") for f in split_files()[1]]
    assert enc.encode(held_text, allowed_special="all") == held_ids.tolist()
    assert tok.decode(held_ids.tolist()) == held_text


def test_trained_lm_trains_once_when_two_callers_ask_at_the_same_time(monkeypatch, tmp_path):
    """Chapters 11 and 12 may run side by side (nbval's two workers): the second waits for
    the first one's run and loads it, with the run's own timings."""
    import threading

    from mha.course import corpus

    monkeypatch.setenv("MHA_COURSE_CACHE", str(tmp_path))
    monkeypatch.setitem(corpus.RECIPE, "steps", 2)
    monkeypatch.setitem(corpus.RECIPE, "num_layers", 1)
    runs = []
    real_train_lm = corpus.train_lm

    def counting_train_lm(*args, **kwargs):
        runs.append(threading.get_ident())
        return real_train_lm(*args, **kwargs)

    monkeypatch.setattr(corpus, "train_lm", counting_train_lm)
    results = [None, None]

    def ask(i):
        results[i] = corpus.trained_lm(progress=False)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(runs) == 1
    (first, first_history), (second, second_history) = results
    assert first_history["cpu_seconds"] == second_history["cpu_seconds"] > 0
    for a, b in zip(first.state_dict().values(), second.state_dict().values()):
        assert torch.equal(a, b)
