# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile, test_causal, test_autograd_function
# Mistake: off-by-one causal mask: also masks j == i, so the first query sees no key (NaN).
# 错误：因果掩码差一：把 j == i 也遮住，第一个查询看不到任何键（NaN）。
@@ -12 +12 @@
-        s = s.masked_fill(cols > rows, float("-inf"))
+        s = s.masked_fill(cols >= rows, float("-inf"))
