# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# Mistake: breaks ties of equal area towards the larger Bk instead of the larger Bq.
# 错误：面积相同时取了较大的 Bk，而不是较大的 Bq。
@@ -14 +14 @@
-        if best is None or (block_q * block_k, block_q) > (best[0] * best[1], best[0]):
+        if best is None or (block_q * block_k, block_k) > (best[0] * best[1], best[1]):
