# selftest-replaces: fa_forward_kernel
# Variant: two loops, as Triton's tutorial does: interior key tiles without any mask or bounds check, then
# the edge tiles (partial last tile, causal diagonal) masked; the online-softmax step is a @triton.jit helper.
# / 变体：两个循环（同 Triton 教程）：内部键分块不做掩码和越界检查，边缘分块（不满的最后一块、因果对角线）
# 再做掩码；在线 softmax 的一步写成 @triton.jit 辅助函数。
@@ -1 +1,13 @@
+@triton.jit
+def online_softmax_step(q, k, v, m, total, acc, scale, visible):
+    """One key tile of the online softmax: the new running maximum, sum and output accumulator."""
+    s = tl.where(visible, tl.dot(q, tl.trans(k)) * scale, float("-inf"))
+    m_new = tl.maximum(m, tl.max(s, axis=1))
+    alpha = tl.exp(m - m_new)
+    p = tl.exp(s - m_new[:, None])
+    total = total * alpha + tl.sum(p, axis=1)
+    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
+    return m_new, total, acc
+
+
 @triton.jit
@@ -15 +27,2 @@
     dims = tl.arange(0, HEAD_DIM)
+    keys = tl.arange(0, BLOCK_K)
@@ -18,2 +31 @@
                 mask=row_ok[:, None], other=0.0)
-
@@ -22 +34,4 @@
     acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
+
+    # Interior tiles: every key exists and (causal) precedes this tile's first query: no mask, no bounds.
+    k_full = (n_k // BLOCK_K) * BLOCK_K
@@ -24 +39,2 @@
-    if IS_CAUSAL:  # keys after this tile's last query are all masked: skip them
+    if IS_CAUSAL:
+        k_full = tl.minimum(k_full, (q_tile * BLOCK_Q + 1) // BLOCK_K * BLOCK_K)
@@ -26,2 +42,10 @@
-    for k0 in range(0, k_end, BLOCK_K):
-        cols = k0 + tl.arange(0, BLOCK_K)
+    everything = rows[:, None] >= 0
+    for k0 in range(0, k_full, BLOCK_K):
+        cols = k0 + keys
+        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd)
+        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd)
+        m, total, acc = online_softmax_step(q, k, v, m, total, acc, scale, everything)
+
+    # Edge tiles: the partial last tile and the tiles the causal diagonal crosses, masked.
+    for k0 in range(k_full, k_end, BLOCK_K):
+        cols = k0 + keys
@@ -33,2 +57 @@
-        s = tl.dot(q, tl.trans(k)) * scale
-        visible = col_ok[None, :]
+        visible = col_ok[None, :] & everything
@@ -37,7 +60 @@
-        s = tl.where(visible, s, float("-inf"))
-        m_new = tl.maximum(m, tl.max(s, axis=1))
-        alpha = tl.exp(m - m_new)
-        p = tl.exp(s - m_new[:, None])
-        total = total * alpha + tl.sum(p, axis=1)
-        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
-        m = m_new
+        m, total, acc = online_softmax_step(q, k, v, m, total, acc, scale, visible)
