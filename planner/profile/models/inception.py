"""Inception-v3 (Szegedy et al. 2016), torchvision's layout without the auxiliary head
(23.8M parameters at width 1); ``width`` scales every channel count and ``blocks``
selects the modules (the tiny variant has one of each kind)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import inplace


class Conv(nn.Module):
    def __init__(self, cin: int, cout: int, k, s=1, p=0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, p, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)
        self.out = cout
        self.inplace = inplace()

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=self.inplace)  # torchvision's BasicConv2d


def seq(*convs: Conv) -> nn.Sequential:
    s = nn.Sequential(*convs)
    s.out = convs[-1].out
    return s


class Mixed(nn.Module):
    """Parallel branches concatenated on channels; ``pool`` is the pooling branch."""

    def __init__(self, branches: list[nn.Module], pool: str, pool_conv: Conv | None, cin: int, stride: int) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)
        self.pool, self.pool_conv, self.stride = pool, pool_conv, stride
        self.out = sum(b.out for b in branches) + (pool_conv.out if pool_conv else cin)

    def forward(self, x):
        outs = []
        for b in self.branches:
            o = b(x)
            outs.extend(o if isinstance(o, list) else [o])
        if self.pool == "avg":
            p = F.avg_pool2d(x, 3, 1, 1)
        else:
            p = F.max_pool2d(x, 3, self.stride)
        outs.append(self.pool_conv(p) if self.pool_conv else p)
        return torch.cat(outs, 1)


class Split(nn.Module):
    """A stem followed by two parallel convs whose outputs are both kept (Inception E)."""

    def __init__(self, stem: nn.Module, a: Conv, b: Conv) -> None:
        super().__init__()
        self.stem, self.a, self.b = stem, a, b
        self.out = a.out + b.out

    def forward(self, x):
        h = self.stem(x)
        return [self.a(h), self.b(h)]


FULL = "AAABCCCCDEE"  # Mixed_5b..5d, 6a, 6b..6e, 7a, 7b, 7c


class Inception(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000, blocks: str = FULL) -> None:
        super().__init__()
        c = lambda n: max(1, int(round(n * width)))  # noqa: E731
        self.stem = seq(Conv(3, c(32), 3, 2), Conv(c(32), c(32), 3), Conv(c(32), c(64), 3, 1, 1))
        self.stem2 = seq(Conv(c(64), c(80), 1), Conv(c(80), c(192), 3))
        cin = c(192)

        def A(cin, pf):
            return Mixed([Conv(cin, c(64), 1), seq(Conv(cin, c(48), 1), Conv(c(48), c(64), 5, 1, 2)),
                          seq(Conv(cin, c(64), 1), Conv(c(64), c(96), 3, 1, 1), Conv(c(96), c(96), 3, 1, 1))],
                         "avg", Conv(cin, c(pf), 1), cin, 1)

        def B(cin):
            return Mixed([Conv(cin, c(384), 3, 2),
                          seq(Conv(cin, c(64), 1), Conv(c(64), c(96), 3, 1, 1), Conv(c(96), c(96), 3, 2))],
                         "max", None, cin, 2)

        def C(cin, c7):
            return Mixed([Conv(cin, c(192), 1),
                          seq(Conv(cin, c(c7), 1), Conv(c(c7), c(c7), (1, 7), 1, (0, 3)),
                              Conv(c(c7), c(192), (7, 1), 1, (3, 0))),
                          seq(Conv(cin, c(c7), 1), Conv(c(c7), c(c7), (7, 1), 1, (3, 0)),
                              Conv(c(c7), c(c7), (1, 7), 1, (0, 3)), Conv(c(c7), c(c7), (7, 1), 1, (3, 0)),
                              Conv(c(c7), c(192), (1, 7), 1, (0, 3)))],
                         "avg", Conv(cin, c(192), 1), cin, 1)

        def D(cin):
            return Mixed([seq(Conv(cin, c(192), 1), Conv(c(192), c(320), 3, 2)),
                          seq(Conv(cin, c(192), 1), Conv(c(192), c(192), (1, 7), 1, (0, 3)),
                              Conv(c(192), c(192), (7, 1), 1, (3, 0)), Conv(c(192), c(192), 3, 2))],
                         "max", None, cin, 2)

        def E(cin):
            return Mixed([Conv(cin, c(320), 1),
                          Split(Conv(cin, c(384), 1), Conv(c(384), c(384), (1, 3), 1, (0, 1)),
                                Conv(c(384), c(384), (3, 1), 1, (1, 0))),
                          Split(seq(Conv(cin, c(448), 1), Conv(c(448), c(384), 3, 1, 1)),
                                Conv(c(384), c(384), (1, 3), 1, (0, 1)), Conv(c(384), c(384), (3, 1), 1, (1, 0)))],
                         "avg", Conv(cin, c(192), 1), cin, 1)

        pool_features = iter((32, 64, 64))
        c7s = iter((128, 160, 160, 192))
        make = {"A": lambda i: A(i, next(pool_features, 64)), "B": B, "C": lambda i: C(i, next(c7s, 192)),
                "D": D, "E": E}
        mods = []
        for kind in blocks:
            mods.append(make[kind](cin))
            cin = mods[-1].out
        self.blocks = nn.Sequential(*mods)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, y):
        h = F.max_pool2d(self.stem(x), 3, 2)
        h = F.max_pool2d(self.stem2(h), 3, 2)
        h = self.blocks(h).mean((2, 3))
        logits = self.fc(F.dropout(h, 0.5, self.training))
        return (F.cross_entropy(logits, y),)


def inception(width: float = 1.0, classes: int = 1000, blocks: str = FULL) -> nn.Module:
    """``blocks``: the sequence of Inception module kinds (A-E); the tiny variant has one of each."""
    return Inception(width, classes, blocks)
