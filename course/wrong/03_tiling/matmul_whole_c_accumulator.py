# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# selftest-selfcheck-fails: test_tiled_matmul
# Mistake: keeps one float32 accumulator for the whole of C (m×n) in fast memory: values and traffic are right, but fast memory holds far more than one tile.
# 错误：在快速内存里为整个 C（m×n）放一个 float32 累加器：值和流量都对，但快速内存里远不止一个块。
@@ -3 +3,2 @@
     (m, k), n = mem["A"].shape, mem["B"].shape[1]
+    acc = torch.zeros(m, n)
@@ -6 +6,0 @@
-            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j), dtype=torch.float32)
@@ -10,2 +10,2 @@
-                acc += a @ b
-            mem["C"][i : i + block_m, j : j + block_n] = acc
+                acc[i : i + block_m, j : j + block_n] += a @ b
+            mem["C"][i : i + block_m, j : j + block_n] = acc[i : i + block_m, j : j + block_n]
