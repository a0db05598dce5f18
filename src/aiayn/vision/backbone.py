"""DETR's CNN backbone: a small ResNet of basic blocks (He et al., 2016), from torch.nn layers.

torchvision's ResNet would be the field's choice, but PyPI's torchvision wheels are built against
CUDA torch and fail to load beside the CPU torch this project installs (its compiled operators
are missing), so the few lines of a basic block are written here.
"""

from __future__ import annotations

from torch import Tensor, nn


def conv_bn(c_in: int, c_out: int, kernel: int, stride: int) -> nn.Sequential:
    """Convolution without bias, then batch norm."""
    conv = nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, bias=False)
    return nn.Sequential(conv, nn.BatchNorm2d(c_out))


class BasicBlock(nn.Module):
    """relu(x' + F(x)), with F two 3x3 convolutions and x' a 1x1 projection where shapes change."""

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = conv_bn(c_in, c_out, 3, stride)
        self.conv2 = conv_bn(c_out, c_out, 3, 1)
        same = stride == 1 and c_in == c_out
        self.shortcut = nn.Identity() if same else conv_bn(c_in, c_out, 1, stride)

    def forward(self, x: Tensor) -> Tensor:
        """(B, C_in, h, w) -> (B, C_out, h / stride, w / stride)."""
        return (self.shortcut(x) + self.conv2(self.conv1(x).relu())).relu()


class ResNetBackbone(nn.Module):
    """A stem, then one stage of two blocks per halving of the resolution (width doubling)."""

    def __init__(self, in_channels: int, channels: int, stride: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn(in_channels, channels, 3, 1), nn.ReLU())
        stages, width = [], channels
        for _ in range(stride.bit_length() - 1):  # log2(stride) halvings
            stages += [BasicBlock(width, 2 * width, 2), BasicBlock(2 * width, 2 * width, 1)]
            width *= 2
        self.stages = nn.Sequential(*stages) if stages else BasicBlock(width, width, 1)
        self.out_channels = width

    def forward(self, images: Tensor) -> Tensor:
        """(B, C, Hp, Wp) -> (B, out_channels, Hp / stride, Wp / stride)."""
        return self.stages(self.stem(images))
