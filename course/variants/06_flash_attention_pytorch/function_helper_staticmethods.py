# selftest-replaces: fa_function
# Variant: routes both passes through extra static helpers; L forced to float32 before saving. / 变体：两个方向都经由额外的静态辅助方法；保存前把 L 明确转为 float32。
@@ -5 +5,11 @@
+    def _attend(Q, K, V, is_causal):
+        out, L = flash_forward(Q, K, V, is_causal)
+        return out, L.to(torch.float32)  # already float32: .to returns the same tensor
+
+    @staticmethod
+    def _grads(saved, dO, is_causal):
+        Q, K, V, out, L = saved
+        return flash_backward(Q, K, V, out, L, dO, is_causal)
+
+    @staticmethod
     def forward(ctx, Q, K, V, is_causal=False):
@@ -6 +16 @@
-        out, L = flash_forward(Q, K, V, is_causal)
+        out, L = FlashAttentionPyTorch._attend(Q, K, V, is_causal)
@@ -13,2 +23 @@
-        Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        dQ, dK, dV = FlashAttentionPyTorch._grads(ctx.saved_tensors, dO, ctx.is_causal)
