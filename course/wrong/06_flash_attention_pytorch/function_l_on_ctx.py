# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: keeps L as a ctx attribute instead of saving it with save_for_backward (breaks the contract).
# 错误：把 L 存成 ctx 的属性，而不是用 save_for_backward 保存（违反约定）。
@@ -7 +7,2 @@
-        ctx.save_for_backward(Q, K, V, out, L)
+        ctx.save_for_backward(Q, K, V, out)
+        ctx.L = L
@@ -13 +14,2 @@
-        Q, K, V, out, L = ctx.saved_tensors
+        Q, K, V, out = ctx.saved_tensors
+        L = ctx.L
