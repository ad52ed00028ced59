"""ResNet-50 (He et al. 2016, torchvision's v1.5 layout: stride in the 3x3 conv), written as
torchvision writes it: ``ReLU(inplace=True)`` and the residual added in place (``out += identity``)."""
from __future__ import annotations

import torch.nn as nn
import torch.nn.functional as F

from . import inplace


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        cout = width * self.expansion
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.relu = nn.ReLU(inplace=inplace())
        self.add_in_place = inplace()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.down is None else self.down(x)
        if self.add_in_place:
            out += identity
        else:
            out = out + identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers: list[int], width: int = 64, classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=inplace()), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], width
        for i, n in enumerate(layers):
            w = width * 2 ** i
            for k in range(n):
                blocks.append(Bottleneck(cin, w, 2 if k == 0 and i > 0 else 1))
                cin = w * Bottleneck.expansion
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, y):
        h = self.blocks(self.stem(x))
        logits = self.fc(h.mean((2, 3)))
        return (F.cross_entropy(logits, y),)


def resnet(layers: list[int], width: int = 64, classes: int = 1000) -> nn.Module:
    return ResNet(layers, width, classes)
