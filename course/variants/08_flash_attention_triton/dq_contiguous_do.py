# selftest-replaces: fa_backward_dq
# Variant: launch_dq makes dO contiguous before launching. / 变体：launch_dq 启动前把 dO 变为连续。
@@ -49,4 +49,5 @@
     n_k = k.shape[1]
     block = block_size(q)
+    grad_out = grad_out.contiguous()
     dq = torch.empty_like(q)
     flash_bwd_dq_kernel[(triton.cdiv(n_q, block), batch)](
