# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_memory
# selftest-whole: plain autograd instead of checkpointed segments
# Mistake: runs the layers with plain autograd: right gradients, but every activation is kept (no memory saved).
# 错误：用普通 autograd 运行所有层：梯度正确，但保存了全部激活（没有省下显存）。
def checkpointed_forward(layers, x, segments):
    for layer in layers:
        x = layer(x)
    return x
