# selftest-replaces: fa_backward_dq
# Variant: launch_dq makes dO contiguous before launching. / 变体：launch_dq 启动前把 dO 变为连续。
@@ -50 +50,2 @@
     block = block_size(q)
+    grad_out = grad_out.contiguous()
