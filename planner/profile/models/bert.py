"""BERT (Devlin et al. 2019) for pretraining: embeddings (word, position, token type),
post-LayerNorm encoder, GELU FFN, dropout 0.1, MLM head (transform + decoder tied to the
word embedding + bias) and NSP head (pooler + classifier); loss = MLM CE + NSP CE."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import SelfAttention


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, dropout: float) -> None:
        super().__init__()
        self.attn = SelfAttention(hidden, heads, dropout)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.fc = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.p = dropout

    def forward(self, x):
        x = self.ln1(x + F.dropout(self.attn(x), self.p, self.training))
        return self.ln2(x + F.dropout(self.out(F.gelu(self.fc(x))), self.p, self.training))


class Bert(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, ffn: int, vocab: int, max_pos: int,
                 dropout: float = 0.1) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.ttype = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn, dropout) for _ in range(layers))
        self.mlm_dense = nn.Linear(hidden, hidden)
        self.mlm_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.mlm_bias = nn.Parameter(torch.zeros(vocab))
        self.pooler = nn.Linear(hidden, hidden)
        self.nsp = nn.Linear(hidden, 2)
        self.p = dropout

    def forward(self, input_ids, token_type_ids, mlm_labels, nsp_labels):
        S = input_ids.shape[1]
        pos = torch.arange(S, device=input_ids.device)
        h = self.ln(self.word(input_ids) + self.pos(pos) + self.ttype(token_type_ids))
        h = F.dropout(h, self.p, self.training)
        for layer in self.layers:
            h = layer(h)
        t = self.mlm_ln(F.gelu(self.mlm_dense(h)))
        logits = F.linear(t, self.word.weight, self.mlm_bias)  # decoder tied to the word embedding
        mlm = F.cross_entropy(logits.flatten(0, 1), mlm_labels.flatten())
        nsp = F.cross_entropy(self.nsp(torch.tanh(self.pooler(h[:, 0]))), nsp_labels)
        return (mlm + nsp,)


def bert(layers: int, hidden: int, heads: int, ffn: int, vocab: int, max_pos: int) -> nn.Module:
    return Bert(layers, hidden, heads, ffn, vocab, max_pos)
