# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: runs the leaves one after another instead of hooking them, as if every model were a chain of its leaves: a residual block's skip path gets the wrong input (and a Transformer's embeddings fail). / 错误：不挂钩子，而是把叶子模块一个接一个地运行，好像每个模型都是叶子串成的链：残差块的跳跃路径拿到了错误的输入（Transformer 的嵌入层则直接出错）。
@@ -4 +4 @@
-    hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in leaves]
+    hooks = []
@@ -7,0 +8,4 @@
             table["parameters"] = next(model.parameters()).dtype
+            h = x
+            for name, leaf in leaves:
+                h = leaf(h)
+                table[name] = h.dtype
