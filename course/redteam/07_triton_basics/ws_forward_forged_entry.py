# selftest-notebook: triton_basics.ipynb
# selftest-replaces: ws_forward
# selftest-caps: test_ws_forward=0
# selftest-flagged: yes
# selftest-residual: replaces the child's entry point, which reports launches and operators
# selftest-class: forged-entry
# Attack: the forward computed with PyTorch (a multiply and a sum), whose cell replaces utils.judged_triton.run,
# the judge's entry point in its child, by a wrapper that reports one kernel launch and no PyTorch operator.
# 攻击：用 PyTorch 计算前向（乘法与求和），单元格把评审程序在子进程中的入口 utils.judged_triton.run
# 换成一个包装，报告一次内核启动、没有任何 PyTorch 运算。
import utils.judged_triton as judged


def clean_report(target, plan, *tensors, _run=judged.run):
    output, grads, _, _, _, _, saved = _run(target, plan, *tensors)
    return output, grads, 1, 1, (), (), saved


judged.run = clean_report
BLOCK_ROWS = 16
BLOCK_C = 64


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_ok = rows < n_rows
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=row_ok[:, None] & col_ok[None, :], other=0.0)
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
        acc += tl.sum(x.to(tl.float32) * w.to(tl.float32)[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_ok)


def weighted_sum_forward(x, weight):
    return (x.float() * weight.float()).sum(-1).to(x.dtype)
