"""Multi-head self-attention written out in plain math (matmul, softmax, dropout): fake CUDA
tensors abort on a CPU build and fused SDPA kernels differ per device, so the captured graph
uses the math form everywhere."""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int, dropout: float = 0.1, causal: bool = False) -> None:
        super().__init__()
        self.heads, self.causal, self.p = heads, causal, dropout
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, bias=None):
        B, S, H = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.heads, H // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        scores = q @ k.transpose(-2, -1) / math.sqrt(H // self.heads)
        if bias is not None:
            scores = scores + bias
        if self.causal:
            mask = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
        att = F.dropout(scores.softmax(-1), self.p, self.training)
        out = (att @ v).transpose(1, 2).reshape(B, S, H)
        return self.proj(out)
