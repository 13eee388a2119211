# A submission whose code kills the notebook kernel, as an out-of-bounds GPU kernel or a segfault would.
# 模拟让内核崩溃的提交（如越界访问的 GPU 内核或段错误）。
import os

os.abort()
