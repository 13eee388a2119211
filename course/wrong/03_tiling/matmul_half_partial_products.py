# selftest-notebook: tiling.ipynb
# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# Mistake: multiplies the tiles in their own dtype, so in float16 each k-step's partial product is rounded to float16 before it is added.
# 错误：用输入的 dtype 相乘，float16 时每一步的部分乘积先舍入成 float16 再累加。
@@ -1,11 +1,8 @@
 def tiled_matmul(mem, block_m, block_n, block_k):
-    # C = A B one tile of C at a time, accumulated in float32 in fast memory, written once.
     (m, k), n = mem["A"].shape, mem["B"].shape[1]
     for i in range(0, m, block_m):
         for j in range(0, n, block_n):
-            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j), dtype=torch.float32)
+            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j))
             for p in range(0, k, block_k):
-                a = mem["A"][i : i + block_m, p : p + block_k].float()
-                b = mem["B"][p : p + block_k, j : j + block_n].float()
-                acc += a @ b
+                acc += (mem["A"][i : i + block_m, p : p + block_k] @ mem["B"][p : p + block_k, j : j + block_n]).float()
             mem["C"][i : i + block_m, j : j + block_n] = acc
