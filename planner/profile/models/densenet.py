"""DenseNet-BC (Huang et al. 2017); DenseNet-121 = growth 32, blocks (6, 12, 24, 16),
bottleneck 4x growth, compression 0.5, 64 initial features (7.98M parameters); every ReLU in
place, as torchvision's."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import inplace


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int, bn_size: int = 4) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(bn_size * growth)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)
        self.inplace = inplace()

    def forward(self, feats: list):
        h = self.conv1(F.relu(self.bn1(torch.cat(feats, 1)), inplace=self.inplace))
        return self.conv2(F.relu(self.bn2(h), inplace=self.inplace))


class DenseNet(nn.Module):
    def __init__(self, growth: int, blocks: list[int], init: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, init, 7, 2, 3, bias=False), nn.BatchNorm2d(init), nn.ReLU(inplace=inplace()),
                                  nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.ModuleList()
        self.trans = nn.ModuleList()
        c = init
        for i, n in enumerate(blocks):
            self.blocks.append(nn.ModuleList(DenseLayer(c + k * growth, growth) for k in range(n)))
            c += n * growth
            if i < len(blocks) - 1:
                self.trans.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(inplace=inplace()), nn.Conv2d(c, c // 2, 1, bias=False),
                                                nn.AvgPool2d(2, 2)))
                c //= 2
        self.bn = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, classes)
        self.inplace = inplace()

    def forward(self, x, y):
        h = self.stem(x)
        for i, block in enumerate(self.blocks):
            feats = [h]
            for layer in block:
                feats.append(layer(feats))
            h = torch.cat(feats, 1)
            if i < len(self.trans):
                h = self.trans[i](h)
        logits = self.fc(F.relu(self.bn(h), inplace=self.inplace).mean((2, 3)))
        return (F.cross_entropy(logits, y),)


def densenet(growth: int, blocks: list[int], init: int, classes: int) -> nn.Module:
    return DenseNet(growth, blocks, init, classes)
