"""Swin Transformer (Liu et al. 2021); Swin-T = embed 96, depths (2, 2, 6, 2), heads
(3, 6, 12, 24), window 7, patch 4 (28.3M parameters). Shifted windows with the attention
mask and relative position index as (non-persistent) buffers; no stochastic depth."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def window_partition(x, w: int):
    B, H, W, C = x.shape
    return x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)


def window_reverse(win, w: int, H: int, W: int):
    C = win.shape[-1]
    B = win.shape[0] // ((H // w) * (W // w))
    return win.view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)


class WindowAttention(nn.Module):
    def __init__(self, dim: int, window: int, heads: int) -> None:
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.02)
        r = torch.arange(window)
        coords = torch.stack(torch.meshgrid(r, r, indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("rel_index", (rel[:, :, 0] * (2 * window - 1) + rel[:, :, 1]).flatten(), persistent=False)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask):
        Bn, N, C = x.shape
        q, k, v = self.qkv(x).reshape(Bn, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn + self.table[self.rel_index].view(N, N, -1).permute(2, 0, 1).unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(Bn // nw, nw, self.heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, N, N)
        out = (attn.softmax(-1) @ v).transpose(1, 2).reshape(Bn, N, C)
        return self.proj(out)


class SwinBlock(nn.Module):
    def __init__(self, dim: int, res: int, heads: int, window: int, shift: int) -> None:
        super().__init__()
        if res <= window:  # the window covers the whole map: no shift (as in the reference code)
            window, shift = res, 0
        self.res, self.window, self.shift = res, window, shift
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, window, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        mask = None
        if shift:
            img = torch.zeros(1, res, res, 1)
            cnt = 0
            for hs in (slice(0, -window), slice(-window, -shift), slice(-shift, None)):
                for ws in (slice(0, -window), slice(-window, -shift), slice(-shift, None)):
                    img[:, hs, ws, :] = cnt
                    cnt += 1
            mw = window_partition(img, window).squeeze(-1)
            diff = mw.unsqueeze(1) - mw.unsqueeze(2)
            mask = diff.masked_fill(diff != 0, -100.0).masked_fill(diff == 0, 0.0)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, L, C = x.shape
        h = self.norm1(x).view(B, self.res, self.res, C)
        if self.shift:
            h = torch.roll(h, (-self.shift, -self.shift), (1, 2))
        h = window_reverse(self.attn(window_partition(h, self.window), self.mask), self.window, self.res, self.res)
        if self.shift:
            h = torch.roll(h, (self.shift, self.shift), (1, 2))
        x = x + h.reshape(B, L, C)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class PatchMerging(nn.Module):
    def __init__(self, dim: int, res: int) -> None:
        super().__init__()
        self.res = res
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        B, L, C = x.shape
        x = x.view(B, self.res, self.res, C)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(B, -1, 4 * C)))


class Swin(nn.Module):
    def __init__(self, embed: int, depths: list[int], heads: list[int], window: int, img: int, classes: int,
                 patch: int = 4) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, embed, patch, patch)
        self.patch_norm = nn.LayerNorm(embed)
        layers = []
        res, dim = img // patch, embed
        for i, (d, h) in enumerate(zip(depths, heads)):
            for k in range(d):
                layers.append(SwinBlock(dim, res, h, window, 0 if k % 2 == 0 else window // 2))
            if i < len(depths) - 1:
                layers.append(PatchMerging(dim, res))
                res, dim = res // 2, dim * 2
        self.layers = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x, y):
        h = self.patch_norm(self.patch(x).flatten(2).transpose(1, 2))
        h = self.norm(self.layers(h))
        return (F.cross_entropy(self.head(h.mean(1)), y),)


def swin(embed: int, depths: list[int], heads: list[int], window: int, img: int, classes: int,
         patch: int = 4) -> nn.Module:
    return Swin(embed, depths, heads, window, img, classes, patch)
