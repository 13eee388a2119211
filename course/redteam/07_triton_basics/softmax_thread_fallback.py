# selftest-notebook: triton_basics.ipynb
# selftest-replaces: softmax_rows
# selftest-caps: test_softmax_rows=0
# selftest-flagged: yes
# selftest-residual: PyTorch in a thread: operator logs are thread-local dispatch modes
# selftest-class: thread-fallback
# Attack: launches its kernel, then returns PyTorch's softmax computed in a worker thread (operator logs are
# dispatch modes, which are thread-local). / 攻击：启动自己的内核后，返回在工作线程里用 PyTorch 算出的 softmax
# （运算记录是 dispatch mode，只对本线程有效）。
import concurrent.futures

WORKER = concurrent.futures.ThreadPoolExecutor(1)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x_row
    y_row = y_ptr + row * stride_y_row
    m = tl.full((1,), float("-inf"), tl.float32)  # running maximum
    total = tl.zeros((1,), dtype=tl.float32)  # running sum of exp(x - m)
    for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
        cols = c0 + tl.arange(0, BLOCK_C)
        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
        cols = c0 + tl.arange(0, BLOCK_C)
        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) / total
        tl.store(y_row + cols * stride_y_col, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def softmax_rows(x, block_c=128):
    y = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                  BLOCK_C=block_c)  # launched, so a launch count sees a kernel
    exact = WORKER.submit(lambda: torch.softmax(x.double(), dim=-1).to(x.dtype)).result()
    return exact
