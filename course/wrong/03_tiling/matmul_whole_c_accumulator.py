# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# selftest-selfcheck-fails: test_tiled_matmul
# Mistake: keeps one float32 accumulator for the whole of C (m×n) in fast memory: values and traffic are right, but fast memory holds far more than one tile.
# 错误：在快速内存里为整个 C（m×n）放一个 float32 累加器：值和流量都对，但快速内存里远不止一个块。
@@ -3,9 +3,9 @@
     (m, k), n = mem["A"].shape, mem["B"].shape[1]
+    acc = torch.zeros(m, n)
     for i in range(0, m, block_m):
         for j in range(0, n, block_n):
-            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j), dtype=torch.float32)
             for p in range(0, k, block_k):
                 a = mem["A"][i : i + block_m, p : p + block_k].float()
                 b = mem["B"][p : p + block_k, j : j + block_n].float()
-                acc += a @ b
-            mem["C"][i : i + block_m, j : j + block_n] = acc
+                acc[i : i + block_m, j : j + block_n] += a @ b
+            mem["C"][i : i + block_m, j : j + block_n] = acc[i : i + block_m, j : j + block_n]
