# selftest-replaces: os_online_softmax
# Variant: no finite_max: exponentials of masked entries are zeroed with torch.where, NaN-free by construction. / 变体：不用 finite_max：用 torch.where 把被遮住位置的指数置 0。
@@ -2 +1,0 @@
-    """softmax(x) over the last dim: one sweep over column blocks for (m, ℓ), one sweep to normalise."""
@@ -6 +5 @@
-    row_sum = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
+    total = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
@@ -10,2 +9,4 @@
-        shift = finite_max(m_new)
-        row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
+        visible = ~torch.isneginf(m_new)
+        old = torch.where(visible & ~torch.isneginf(m), torch.exp(m - m_new), torch.zeros_like(m))
+        terms = torch.where(torch.isneginf(block), torch.zeros_like(block), torch.exp(block - m_new[..., None]))
+        total = total * old + terms.sum(dim=-1)
@@ -13 +13,0 @@
-    shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
@@ -17 +17,2 @@
-        out[..., c0 : c0 + block_size] = (torch.exp(block - shift[..., None]) * inverse[..., None]).to(x.dtype)
+        p = torch.where(torch.isneginf(block), torch.zeros_like(block), torch.exp(block - m[..., None]) / total[..., None])
+        out[..., c0 : c0 + block_size] = p.to(x.dtype)
