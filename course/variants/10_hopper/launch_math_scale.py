# selftest-replaces: hopper_launch
# Variant: the base-2 score scale computed with math.log2(math.e) / math.sqrt(d).
# 变体：以 2 为底的分数缩放用 math.log2(math.e) / math.sqrt(d) 计算。
@@ -3 +3 @@
-LOG2E = 1.4426950408889634
+import math
@@ -30 +30 @@
-        n_q, n_k, batch, d**-0.5 * LOG2E,
+        n_q, n_k, batch, math.log2(math.e) / math.sqrt(d),
