# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: trusts the descriptor's zero padding: the key tail's scores (0, not absent) are never masked.
# 错误：以为描述符补零就够了：键尾部的分数（是 0，不是不存在）从未被屏蔽。
@@ -10 +9,0 @@
-        visible = cols[None, :] < n_k
@@ -12,2 +11 @@
-            visible = visible & (cols[None, :] <= rows[:, None])
-        s = tl.where(visible, s, float("-inf"))
+            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
