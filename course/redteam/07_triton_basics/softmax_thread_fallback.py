# selftest-replaces: softmax_rows
# selftest-caps: test_softmax_rows=0
# selftest-flagged: yes
# selftest-residual: PyTorch in a thread: operator logs are thread-local dispatch modes
# selftest-class: thread-fallback
# Attack: launches its kernel, then returns PyTorch's softmax computed in a worker thread (operator logs are
# dispatch modes, which are thread-local). / 攻击：启动自己的内核后，返回在工作线程里用 PyTorch 算出的 softmax
# （运算记录是 dispatch mode，只对本线程有效）。
@@ -1 +1,6 @@
+import concurrent.futures
+
+WORKER = concurrent.futures.ThreadPoolExecutor(1)
+
+
 @triton.jit
@@ -25,2 +30,3 @@
-                                  BLOCK_C=block_c)
-    return y
+                                  BLOCK_C=block_c)  # launched, so a launch count sees a kernel
+    exact = WORKER.submit(lambda: torch.softmax(x.double(), dim=-1).to(x.dtype)).result()
+    return exact
