"""Attention implementations: the naive baseline, FlashAttention in PyTorch and in Triton."""

from utils.attention.api import BACKENDS, flash_attention
from utils.attention.flash_pytorch import FlashAttentionPyTorch
from utils.attention.flash_triton import FlashAttentionTriton
from utils.attention.naive import naive_attention

__all__ = ["BACKENDS", "FlashAttentionPyTorch", "FlashAttentionTriton", "flash_attention", "naive_attention"]
