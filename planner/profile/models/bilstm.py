"""Bidirectional LSTM sequence tagger: embedding, ``layers`` bidirectional LSTM layers
written as explicit cells (one fused gate matmul per step; the input projection of all
steps as one matmul), a linear tagger and token-level cross-entropy. The captured graph is
unrolled over time, so its size grows with the sequence length (hence a short sequence)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMDir(nn.Module):
    def __init__(self, cin: int, hidden: int) -> None:
        super().__init__()
        self.ih = nn.Linear(cin, 4 * hidden)
        self.hh = nn.Linear(hidden, 4 * hidden, bias=False)
        self.hidden = hidden

    def forward(self, x, reverse: bool):
        B, S, _ = x.shape
        xs = self.ih(x)  # all steps at once
        h = x.new_zeros(B, self.hidden)
        c = x.new_zeros(B, self.hidden)
        outs = [None] * S
        for s in (reversed(range(S)) if reverse else range(S)):
            i, f, g, o = (xs[:, s] + self.hh(h)).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs[s] = h
        return torch.stack(outs, 1)


class BiLSTM(nn.Module):
    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, tags: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        dims = [embed] + [2 * hidden] * (layers - 1)
        self.fwd = nn.ModuleList(LSTMDir(d, hidden) for d in dims)
        self.bwd = nn.ModuleList(LSTMDir(d, hidden) for d in dims)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens, tags):
        h = self.embed(tokens)
        for f, b in zip(self.fwd, self.bwd):
            h = torch.cat([f(h, False), b(h, True)], 2)
        return (F.cross_entropy(self.out(h).flatten(0, 1), tags.flatten()),)


def bilstm(vocab: int, embed: int, hidden: int, layers: int, tags: int) -> nn.Module:
    return BiLSTM(vocab, embed, hidden, layers, tags)
