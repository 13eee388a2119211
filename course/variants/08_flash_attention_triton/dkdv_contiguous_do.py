# selftest-replaces: fa_backward_dkdv
# Variant: launch_dkdv makes dO contiguous before launching (a copy for a transposed or stride-0 dO).
# / 变体：launch_dkdv 启动前把 dO 变为连续（转置或步长为 0 的 dO 会被复制）。
@@ -53,4 +53,5 @@
     n_k = k.shape[1]
     block = block_size(q)
+    grad_out = grad_out.contiguous()
     dk, dv = torch.empty_like(k), torch.empty_like(v)
     flash_bwd_dkdv_kernel[(triton.cdiv(n_k, block), batch)](
