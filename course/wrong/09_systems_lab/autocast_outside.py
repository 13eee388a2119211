# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: runs the model outside autocast (the context is entered after the forward pass). / 错误：在 autocast 之外运行模型。
@@ -4,7 +4,7 @@
     hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in leaves]
     try:
+        logits = model(x)
         with torch.autocast(x.device.type, dtype=dtype):
             table["parameters"] = next(model.parameters()).dtype
-            logits = model(x)
             loss = F.cross_entropy(logits.flatten(0, -2), target.flatten())
         table["loss"] = loss.dtype
