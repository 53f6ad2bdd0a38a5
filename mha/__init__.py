"""mha: the tested code behind the course *Multi-Head Attention, Executable*.

The chapters teach each idea step by step; this package holds the reusable version,
checked against PyTorch's own built-ins. Shape letters: B batch, L query length,
S key/value length, D = d_model, H = num_heads, d_k = head_dim = D / H.

Masks are boolean everywhere, with ``True`` = "this query may attend to this key".
"""
from .attention import scaled_dot_product_attention
from .cache import KVCache
from .decoding import greedy_decode
from .heads import merge_heads, split_heads
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention
from .norms import BatchNorm, LayerNorm
from .positional import sinusoidal_positions
from .transformer import DecoderLayer, EncoderLayer, FeedForward, Transformer

from . import example, numerals, training

__version__ = "0.1.0"

__all__ = [
    "BatchNorm", "DecoderLayer", "EncoderLayer", "FeedForward", "KVCache", "LayerNorm",
    "MultiHeadAttention", "Transformer", "causal_mask", "greedy_decode", "merge_heads",
    "padding_mask", "scaled_dot_product_attention", "sinusoidal_positions", "split_heads",
]
