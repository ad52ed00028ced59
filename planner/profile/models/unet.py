"""U-Net (Ronneberger et al. 2015) as commonly trained today (milesial/Pytorch-UNet): 4
levels down and up, 64 base channels, padded 3x3 convs with BatchNorm, transposed-conv
upsampling, per-pixel cross-entropy (31.0M parameters for 3 in / 2 out channels);
``ReLU(inplace=True)`` as there."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import inplace


def double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=inplace()),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=inplace()))


class Up(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = double_conv(cin, cout)

    def forward(self, x, skip):
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


class UNet(nn.Module):
    def __init__(self, base: int = 64, classes: int = 2, cin: int = 3) -> None:
        super().__init__()
        c = [base * 2 ** i for i in range(5)]
        self.inc = double_conv(cin, c[0])
        self.downs = nn.ModuleList(double_conv(c[i], c[i + 1]) for i in range(4))
        self.ups = nn.ModuleList(Up(c[i + 1], c[i]) for i in reversed(range(4)))
        self.outc = nn.Conv2d(c[0], classes, 1)

    def forward(self, x, y):
        skips = [self.inc(x)]
        for d in self.downs:
            skips.append(d(F.max_pool2d(skips[-1], 2)))
        h = skips.pop()
        for u in self.ups:
            h = u(h, skips.pop())
        return (F.cross_entropy(self.outc(h), y),)


def unet(base: int = 64, classes: int = 2) -> nn.Module:
    return UNet(base, classes)
