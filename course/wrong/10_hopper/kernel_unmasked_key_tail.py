# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: trusts the descriptor's zero padding: the key tail's scores (0, not absent) are never masked.
# 错误：以为描述符补零就够了：键尾部的分数（是 0，不是不存在）从未被屏蔽。
@@ -8,8 +8,6 @@
     if MASKED:  # the diagonal and the key tail (read as zeros: their scores must go)
         cols = k_start + tl.arange(0, BLOCK_K)
-        visible = cols[None, :] < n_k
         if IS_CAUSAL:
-            visible = visible & (cols[None, :] <= rows[:, None])
-        s = tl.where(visible, s, float("-inf"))
+            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
     new_max = tl.maximum(row_max, tl.max(s, 1))
     p = tl.exp2(s - new_max[:, None])
