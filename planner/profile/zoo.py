"""The model zoo (torch-free): name -> spec with default batch, input shapes and builder.

Batch sizes and shapes are chosen to be realistic single-GPU training jobs on an A100 80GB
(the Coop paper's hardware): standard input resolutions and sequence lengths, batches whose
plain (no-remat) step fits the card with room to spare, so budgets below 1.0 are the
interesting regime. BERT-Large and GPT-3 2.7B are bf16 (as they are trained), the CNNs,
Swin and the LSTM fp32 (TF32 math). ``-tiny`` variants keep each model's structure (block types, attention,
skip connections, BatchNorm, dropout, tied weights) with small widths, depths and inputs for
fast tests and for the executor; they are fp32.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class InputSpec:
    name: str                  # argument name of the model's forward
    shape: tuple[int, ...]     # per-sample shape (the batch dimension is prepended)
    dtype: str = "model"       # "model" (the model's float dtype) or "int64"
    high: int = 0              # int64 inputs: values drawn from [0, high)


@dataclass(frozen=True)
class ModelSpec:
    name: str                          # zoo name (CLI --model)
    builder: str                       # "module:function" returning an nn.Module; forward(*inputs) -> (loss,)
    batch: int                         # default batch size
    inputs: tuple[InputSpec, ...]      # the batch, in forward's argument order
    dtype: str = "float32"             # parameter / activation dtype: float32 | bfloat16
    config: dict[str, Any] = field(default_factory=dict)  # keyword arguments of the builder
    ref_params: float | None = None    # reference parameter count (tested within 2%)
    note: str = ""                     # why these shapes


M = "planner.profile.models"


def _img(c: int, h: int, w: int, classes: int) -> tuple[InputSpec, ...]:
    return (InputSpec("x", (c, h, w)), InputSpec("y", (), "int64", classes))


def _seg(c: int, h: int, w: int, classes: int) -> tuple[InputSpec, ...]:
    return (InputSpec("x", (c, h, w)), InputSpec("y", (h, w), "int64", classes))


def _bert(seq: int, vocab: int) -> tuple[InputSpec, ...]:
    return (InputSpec("input_ids", (seq,), "int64", vocab), InputSpec("token_type_ids", (seq,), "int64", 2),
            InputSpec("mlm_labels", (seq,), "int64", vocab), InputSpec("nsp_labels", (), "int64", 2))


def _lm(seq: int, vocab: int) -> tuple[InputSpec, ...]:
    return (InputSpec("input_ids", (seq,), "int64", vocab), InputSpec("labels", (seq,), "int64", vocab))


def _tag(seq: int, vocab: int, tags: int) -> tuple[InputSpec, ...]:
    return (InputSpec("tokens", (seq,), "int64", vocab), InputSpec("tags", (seq,), "int64", tags))


_SPECS = [
    ModelSpec("resnet50", f"{M}.resnet:resnet", 128, _img(3, 224, 224, 1000),
              config=dict(layers=[3, 4, 6, 3], width=64, classes=1000), ref_params=25.557e6,
              note="ImageNet 224x224, batch 128"),
    ModelSpec("resnet50-tiny", f"{M}.resnet:resnet", 2, _img(3, 32, 32, 10),
              config=dict(layers=[1, 1, 1, 1], width=4, classes=10)),
    ModelSpec("unet", f"{M}.unet:unet", 4, _seg(3, 512, 512, 2),
              config=dict(base=64, classes=2), ref_params=31.04e6,
              note="original 4-level U-Net, 64 base channels, 512x512 segmentation, batch 4"),
    ModelSpec("unet-tiny", f"{M}.unet:unet", 64, _seg(3, 32, 32, 2), config=dict(base=4, classes=2),
              note="batch 64 so activations, not parameters and gradients, dominate the peak: "
                   "ratio 0.5 is then reachable by coop (at batch 2 the floor was 0.49)"),
    ModelSpec("bert-large", f"{M}.bert:bert", 16, _bert(512, 30522), "bfloat16",
              config=dict(layers=24, hidden=1024, heads=16, ffn=4096, vocab=30522, max_pos=512),
              ref_params=335.2e6,
              note="BERT-Large pretraining (MLM + NSP heads, tied decoder), seq 512, batch 16, bf16"),
    ModelSpec("bert-large-tiny", f"{M}.bert:bert", 2, _bert(16, 128),
              config=dict(layers=2, hidden=32, heads=2, ffn=64, vocab=128, max_pos=16)),
    ModelSpec("gpt3-2.7b", f"{M}.gpt:gpt", 4, _lm(1024, 50257), "bfloat16",
              config=dict(layers=32, hidden=2560, heads=32, vocab=50257, max_pos=2048),
              ref_params=2.65e9,
              note="GPT-3 2.7B (32 layers, d 2560, 32 heads, tied embedding), seq 1024, batch 4, bf16"),
    ModelSpec("gpt3-2.7b-tiny", f"{M}.gpt:gpt", 2, _lm(16, 128),
              config=dict(layers=2, hidden=32, heads=2, vocab=128, max_pos=32)),
    ModelSpec("swin-t", f"{M}.swin:swin", 64, _img(3, 224, 224, 1000),
              config=dict(embed=96, depths=[2, 2, 6, 2], heads=[3, 6, 12, 24], window=7, img=224, classes=1000),
              ref_params=28.29e6, note="Swin-T, ImageNet 224x224, window 7, batch 64"),
    ModelSpec("swin-t-tiny", f"{M}.swin:swin", 2, _img(3, 16, 16, 10),
              config=dict(embed=8, depths=[2, 1], heads=[1, 2], window=2, img=16, classes=10, patch=2)),
    ModelSpec("inception-v3", f"{M}.inception:inception", 32, _img(3, 299, 299, 1000),
              config=dict(width=1.0, classes=1000), ref_params=23.83e6,
              note="Inception-v3 without aux head, 299x299, batch 32"),
    ModelSpec("inception-v3-tiny", f"{M}.inception:inception", 2, _img(3, 75, 75, 10),
              config=dict(width=0.125, classes=10, blocks="ABCDE")),
    ModelSpec("densenet121", f"{M}.densenet:densenet", 64, _img(3, 224, 224, 1000),
              config=dict(growth=32, blocks=[6, 12, 24, 16], init=64, classes=1000), ref_params=7.98e6,
              note="DenseNet-121, 224x224, batch 64"),
    ModelSpec("densenet121-tiny", f"{M}.densenet:densenet", 2, _img(3, 32, 32, 10),
              config=dict(growth=4, blocks=[2, 2, 2, 2], init=8, classes=10)),
    ModelSpec("bilstm", f"{M}.bilstm:bilstm", 256, _tag(32, 20000, 50),
              config=dict(vocab=20000, embed=512, hidden=1024, layers=2, tags=50), ref_params=None,
              note="2-layer bidirectional LSTM tagger, hidden 1024, seq 32 (the graph is unrolled per step), "
                   "batch 256"),
    ModelSpec("bilstm-tiny", f"{M}.bilstm:bilstm", 2, _tag(3, 50, 5),
              config=dict(vocab=50, embed=8, hidden=8, layers=2, tags=5)),
]

ZOO: dict[str, ModelSpec] = {s.name: s for s in _SPECS}
