# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# selftest-selfcheck-fails: test_saved_bytes
# Mistake: calls x.requires_grad_() first "to make sure the graph is recorded": it changes x, and when x needs no
# gradient it counts tensors saved only because of that.
# 错误：为了「确保记录计算图」先调用 x.requires_grad_()：改动了 x，x 本不需要梯度时多算了只
# 因此才保存的张量。
@@ -13 +13,2 @@
+    x.requires_grad_(True)
     with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
