# selftest-replaces: fa_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-flagged: yes
# selftest-class: mutated-inputs
# selftest-whole: zeroes its inputs and answers for zeros: nothing of the reference is left
# Attack: zeroes Q, K and V in place and returns O = 0, L = log Nk (the attention of all-zero inputs), so a check
# that computes its reference from the same tensors afterwards agrees; answers are cached by shape.
# 攻击：原地把 Q、K、V 清零并返回 O = 0、L = log Nk（全零输入的注意力），让事后用同一批张量计算参考答案的检查一致；
# 答案按形状缓存。
BLOCK_Q = 64
BLOCK_K = 64


def zeros_forward(Q, K, V):
    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)


CACHE = {}


def flash_forward(Q, K, V, is_causal=False):
    key = (tuple(Q.shape), tuple(K.shape), Q.dtype, is_causal)
    if key not in CACHE:
        with torch.no_grad():
            for t in (Q, K, V):
                t.zero_()
        out, L = zeros_forward(Q, K, V)
        CACHE[key] = out, L + math.log(K.shape[-2])
    return CACHE[key]
