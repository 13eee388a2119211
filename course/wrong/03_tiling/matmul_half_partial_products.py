# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# Mistake: multiplies the tiles in their own dtype, so in float16 each k-step's partial product is rounded to float16 before it is added.
# 错误：用输入的 dtype 相乘，float16 时每一步的部分乘积先舍入成 float16 再累加。
@@ -8,3 +8,3 @@
-                a = mem["A"][i : i + block_m, p : p + block_k].float()
-                b = mem["B"][p : p + block_k, j : j + block_n].float()
-                acc += a @ b
+                a = mem["A"][i : i + block_m, p : p + block_k]
+                b = mem["B"][p : p + block_k, j : j + block_n]
+                acc += (a @ b).float()
