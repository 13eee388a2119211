# selftest-replaces: fa_backward_dkdv
# Variant: launch_dkdv makes dO contiguous before launching (a copy for a transposed or stride-0 dO).
# / 变体：launch_dkdv 启动前把 dO 变为连续（转置或步长为 0 的 dO 会被复制）。
@@ -54 +54,2 @@
     block = block_size(q)
+    grad_out = grad_out.contiguous()
