"""GPT-3-style decoder (Brown et al. 2020; GPT-2 layout): learned positions, pre-LayerNorm
blocks, GELU MLP (4x), dropout 0.1, LM head tied to the token embedding (the same parameter
used twice, so its two gradient contributions are summed inside the captured graph)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import SelfAttention


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = SelfAttention(hidden, heads, dropout, causal=True)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)
        self.p = dropout

    def forward(self, x):
        x = x + F.dropout(self.attn(self.ln1(x)), self.p, self.training)
        return x + F.dropout(self.out(F.gelu(self.fc(self.ln2(x)))), self.p, self.training)


class GPT(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, vocab: int, max_pos: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.p = dropout

    def forward(self, input_ids, labels):
        S = input_ids.shape[1]
        pos = torch.arange(S, device=input_ids.device)
        h = F.dropout(self.wte(input_ids) + self.wpe(pos), self.p, self.training)
        for blk in self.blocks:
            h = blk(h)
        logits = F.linear(self.ln_f(h), self.wte.weight)  # tied head
        return (F.cross_entropy(logits.flatten(0, 1), labels.flatten()),)


def gpt(layers: int, hidden: int, heads: int, vocab: int, max_pos: int) -> nn.Module:
    return GPT(layers, hidden, heads, vocab, max_pos)
