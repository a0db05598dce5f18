"""SETR (Zheng et al., 2021): segmentation as sequence-to-sequence, a ViT encoder without a class
token, and a convolutional decoder that upsamples the token grid back to every pixel (PUP)."""

from __future__ import annotations

from torch import Tensor, nn

from aiayn.vision.vit import ViTEncoder


def upsampling_decoder(d_model: int, channels: int, n_classes: int, factor: int) -> nn.Sequential:
    """SETR-PUP: (conv 3x3, batch norm, ReLU, 2x bilinear upsampling) log2(factor) times, then a
    1x1 convolution to class scores."""
    layers: list[nn.Module] = []
    c_in = d_model
    for _ in range(factor.bit_length() - 1):
        layers += [
            nn.Conv2d(c_in, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        ]
        c_in = channels
    layers.append(nn.Conv2d(c_in, n_classes, kernel_size=1))
    return nn.Sequential(*layers)


class SETR(nn.Module):
    """Per-pixel class scores; class 0 is the background."""

    def __init__(self, encoder: ViTEncoder, n_classes: int, patch_size: int) -> None:
        super().__init__()
        self.encoder = encoder
        d_model = encoder.pos_embed.shape[-1]
        self.decoder = upsampling_decoder(d_model, d_model, n_classes, patch_size)

    def forward(self, images: Tensor) -> Tensor:
        """(B, C, Hp, Wp) -> (B, n_classes, Hp, Wp) logits."""
        tokens = self.encoder(images).tokens  # (B, N, D)
        B, N, D = tokens.shape
        G = int(N**0.5)
        grid = tokens.transpose(1, 2).reshape(B, D, G, G)  # (B, D, G, G)
        return self.decoder(grid)  # (B, classes, Hp, Wp)
