# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: runs the model outside autocast (the context is entered after the forward pass). / 错误：在 autocast 之外运行模型。
@@ -5 +5,2 @@
     try:
+        logits = model(x)
@@ -8 +8,0 @@
-            logits = model(x)
