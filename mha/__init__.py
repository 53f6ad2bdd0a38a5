"""mha: the tested code behind the course *Multi-Head Attention, Executable*.

The chapters teach each idea step by step; this package holds the reusable version,
checked against PyTorch's own built-ins. Shape letters: B batch, L query length,
S key/value length, D = d_model, H = num_heads, d_k = head_dim = D / H.

Masks are boolean everywhere, with ``True`` = "this query may attend to this key".
"""
from .alibi import alibi_bias, alibi_slopes
from .attention import scaled_dot_product_attention
from .beam import beam_search
from .bpe import BPETokenizer
from .cache import KVCache, StaticKVCache
from .decoding import greedy_decode
from .generation import generate
from .gpt import GPT, Block, GPTConfig
from .heads import merge_heads, repeat_kv, split_heads
from .kv_memory import PUBLISHED_CONFIGS, AttentionConfig, kv_cache_bytes, kv_cache_bytes_per_token
from .latent import MultiHeadLatentAttention
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention
from .mlp import MLP, SwiGLU
from .norms import BatchNorm, LayerNorm, RMSNorm
from .positional import sinusoidal_positions
from .sampling import top_k_logits, top_p_logits
from .sinks import SinkAttention, attention_with_sinks
from .rope import apply_rope, rope_angles, rotate_half
from .transformer import DecoderLayer, EncoderLayer, FeedForward, Transformer
from .windows import RollingKVCache, receptive_field, sliding_window_mask

from . import course

__version__ = "0.1.0"

__all__ = [
    "BPETokenizer", "Block", "GPT", "GPTConfig", "beam_search", "generate", "top_k_logits",
    "top_p_logits",
    "MLP", "RMSNorm", "SwiGLU", "alibi_bias", "alibi_slopes", "apply_rope", "rope_angles",
    "rotate_half",
    "BatchNorm", "DecoderLayer", "EncoderLayer", "FeedForward", "KVCache", "LayerNorm",
    "MultiHeadAttention", "Transformer", "causal_mask", "greedy_decode", "merge_heads",
    "padding_mask", "scaled_dot_product_attention", "sinusoidal_positions", "split_heads",
    "repeat_kv", "StaticKVCache",
    "AttentionConfig", "MultiHeadLatentAttention", "PUBLISHED_CONFIGS", "RollingKVCache",
    "SinkAttention", "attention_with_sinks", "kv_cache_bytes", "kv_cache_bytes_per_token",
    "receptive_field", "sliding_window_mask",
]
