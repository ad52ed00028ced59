"""A model that is not in the zoo, written the way reference code is (``ReLU(inplace=True)``,
``out += identity``, dropout, AdamW), for the eager-capture tests and ``profile --module``."""
from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    """torchvision's BasicBlock: conv-bn-relu_, conv-bn, ``out += identity``, relu_."""

    def __init__(self, c: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class SmallNet(nn.Module):
    def __init__(self, c: int = 8, classes: int = 5, size: int = 16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(Block(c), Block(c))
        self.drop = nn.Dropout(0.25)
        self.head = nn.Linear(c * size * size, classes)

    def forward(self, x, y=None):
        logits = self.head(self.drop(self.blocks(self.stem(x))).flatten(1))
        return logits if y is None else nn.functional.cross_entropy(logits, y)


def factory(batch: int = 8, size: int = 16):
    """(model, batch, loss_fn, optimizer) as ``profile --module`` wants them."""
    model = SmallNet(size=size)
    x = torch.randn(batch, 3, size, size)
    y = torch.randint(0, 5, (batch,))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    return model, (x, y), None, opt  # the model returns the loss when given labels


def broken():
    """A factory whose model does not run on its batch (wrong channel count)."""
    model = SmallNet()
    return model, (torch.randn(2, 4, 16, 16),)


def wrong():
    """A factory that returns the wrong things."""
    return 42
