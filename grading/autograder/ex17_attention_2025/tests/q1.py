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

@test_case(points=None, hidden=True)
def test_latent_cache_random_sizes(latent_cache):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, randn, random_sizes
    for seed in range(3):
        B, L, H, half = random_sizes(1710 + seed, 4, 1, 5)
        torch.manual_seed(seed)
        attn = mha.MultiHeadLatentAttention(16 * H, H, kv_lora_rank=6 + 2 * seed, qk_nope_head_dim=4, qk_rope_head_dim=2 * half, v_head_dim=3, rope_layout=['interleaved', 'half', 'interleaved'][seed])
        x = randn(B, L + 1, 16 * H, seed=seed)
        with torch.no_grad():
            expected = attn.latent(x, torch.arange(L + 1))
        got = check_tuple(call(latent_cache, 'latent_cache', attn=attn, x=x), 'latent_cache', ('latent', 'k_rope'))
        check_tensor(got[0], expected[0], f'the latent for x {list(x.shape)}')
        check_tensor(got[1], expected[1], f'the RoPE key for x {list(x.shape)}, rope width {2 * half}')

