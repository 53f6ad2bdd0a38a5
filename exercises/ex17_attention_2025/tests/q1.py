from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 4
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_latent_cache(latent_cache):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(latent_cache, 'latent_cache', {'attn.latent': 'build the cache from the weights yourself.'})
    torch.manual_seed(171)
    attn = mha.MultiHeadLatentAttention(32, 2, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=4)
    x = randn(2, 6, 32, seed=171)
    positions = torch.arange(6)
    with torch.no_grad():
        latent, k_rope = attn.latent(x, positions)
        down = attn.kv_a_proj_with_mqa(x)
        raw_latent, raw_rope = down.split([8, 4], dim=-1)
        rotated_latent = mha.apply_rope(latent, positions, attn.rope_base, layout=attn.rope_layout)
    got = call(latent_cache, 'latent_cache', attn=attn, x=x)
    got_latent, got_rope = check_tuple(got, 'latent_cache(attn, x [2, 6, 32])', ('latent', 'k_rope'))
    check_tensor(got_latent, latent, 'the latent of latent_cache(attn, x [2, 6, 32])', catalogued('ex17', 'q1', rope_on_latent=rotated_latent, latent_not_normed=raw_latent[:, None]))
    check_tensor(got_rope, k_rope, 'the RoPE key of latent_cache(attn, x [2, 6, 32])', catalogued('ex17', 'q1', rope_missing=raw_rope[:, None]))

