# selftest-replaces: fa_function
# Variant: the forward and backward in helpers of its own whose names hold the library's words, named like
# the notebook's launch_dkdv and launch_dq (launch_flash_attention_forward, launch_flash_attention_backward,
# scaled_dot_product_attention_tiles, a ctx attribute multi_head_attention_causal); only what the code calls
# may cost points, never a name (a submission like this once scored 0 as "library attention").
# / 变体：前向与反向放在自己的辅助函数里，函数名含有库的词，仿照笔记本的 launch_dkdv 与 launch_dq 命名
# （launch_flash_attention_forward、launch_flash_attention_backward、scaled_dot_product_attention_tiles，
# 以及 ctx 属性 multi_head_attention_causal）；只有代码真正调用的东西才可能扣分，名字不会（这样的提交曾被当作
# "库注意力"得 0 分）。
@@ -5 +5,2 @@
-    """A tile size that fits in shared memory for every supported d and dtype."""
+    """A tile size that fits in shared memory for every supported d and dtype (the backward launchers use
+    it)."""
@@ -6 +7,26 @@
     return 64 if q.shape[-1] * q.element_size() <= 128 else 32
+
+
+def scaled_dot_product_attention_tiles(q):
+    """The forward's square tile and its grid: one program per tile of queries, per batch."""
+    tile = block_size(q)
+    return tile, (triton.cdiv(q.shape[1], tile), q.shape[0])
+
+
+def launch_flash_attention_forward(q, k, v, is_causal):
+    """O and the float32 log-sum-exp L of each query row, from one launch of flash_fwd_kernel."""
+    tile, grid = scaled_dot_product_attention_tiles(q)
+    o = torch.empty_like(q)
+    lse = torch.empty(q.shape[:2], device=q.device, dtype=torch.float32)
+    flash_fwd_kernel[grid](
+        q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
+        q.shape[1], k.shape[1], q.shape[2] ** -0.5,
+        HEAD_DIM=q.shape[2], BLOCK_Q=tile, BLOCK_K=tile, IS_CAUSAL=is_causal)
+    return o, lse
+
+
+def launch_flash_attention_backward(q, k, v, o, lse, grad_out, is_causal):
+    """dQ, dK, dV: Δ = rowsum(dO ∘ O) in float32, then the two backward kernels."""
+    delta = (grad_out.float() * o.float()).sum(-1)
+    dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, is_causal)
+    return launch_dq(q, k, v, grad_out, lse, delta, is_causal), dk, dv
@@ -17,8 +43 @@
-        batch, n_q, d = q.shape
-        n_k = k.shape[1]
-        block = block_size(q)
-        o = torch.empty_like(q)
-        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
-            q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+        o, lse = launch_flash_attention_forward(q, k, v, is_causal)
@@ -26 +45 @@
-        ctx.is_causal = is_causal
+        ctx.multi_head_attention_causal = is_causal
@@ -32,3 +51,3 @@
-        delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
-        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
-        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
+        dq, dk, dv = launch_flash_attention_backward(
+            q, k, v, o, lse, grad_out, ctx.multi_head_attention_causal
+        )
