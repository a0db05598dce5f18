"""ViT (Dosovitskiy et al., 2021): an image as a sequence of P x P patches, each embedded like a
word, a learned class token in front, positions added, then the Transformer encoder."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from aiayn.model.layers import EncoderLayer, LayerSpec
from aiayn.vision.positional import sine_positions_2d


class PatchEmbedding(nn.Module):
    """Cut into P x P patches and project each to D: one strided convolution (ViT eq. 1)."""

    def __init__(self, in_channels: int, d_model: int, patch_size: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        """(B, C, Hp, Wp) -> (B, N, D), patches in reading order."""
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, D, G, G) -> (B, N, D)


@dataclass(frozen=True)
class EncodedImages:
    tokens: Tensor  # (B, 1 + N, D) with a class token, else (B, N, D); after the final norm
    attention: tuple[Tensor, ...] = ()  # per layer (B, H, tokens, tokens), when asked


class ViTEncoder(nn.Module):
    """Patch embedding, class token, positions, our `EncoderLayer`s and (pre-norm) a final norm."""

    def __init__(
        self,
        spec: LayerSpec,
        n_layers: int,
        image_size: int,
        patch_size: int,
        in_channels: int,
        class_token: bool = True,
        positions: str = "learned",
    ) -> None:
        super().__init__()
        grid = image_size // patch_size
        n_tokens = grid * grid + int(class_token)
        self.patch_embed = PatchEmbedding(in_channels, spec.d_model, patch_size)
        self.class_token = nn.Parameter(torch.zeros(1, 1, spec.d_model)) if class_token else None
        if positions == "learned":
            self.pos_embed = nn.Parameter(torch.randn(1, n_tokens, spec.d_model) * 0.02)
        else:  # fixed 2-D sines; the class token's position is zero
            sines = sine_positions_2d(grid, grid, spec.d_model)  # (N, D)
            if class_token:
                sines = torch.cat((torch.zeros(1, spec.d_model), sines))  # (1 + N, D)
            self.register_buffer("pos_embed", sines[None], persistent=False)
        self.dropout = nn.Dropout(spec.dropout)
        self.layers = nn.ModuleList(EncoderLayer(spec) for _ in range(n_layers))
        norm = spec.norm_first  # post-norm layers already end with a LayerNorm
        self.norm = nn.LayerNorm(spec.d_model, eps=spec.norm_eps) if norm else nn.Identity()

    def forward(self, images: Tensor, need_weights: bool = False) -> EncodedImages:
        """(B, C, Hp, Wp) images -> (B, [1 +] N, D) tokens, and attention weights if asked."""
        x = self.patch_embed(images)  # (B, N, D)
        if self.class_token is not None:
            x = torch.cat((self.class_token.expand(x.shape[0], -1, -1), x), dim=1)  # (B, 1+N, D)
        x = self.dropout(x + self.pos_embed)
        weights = []
        for layer in self.layers:
            x, w = layer(x, None, need_weights=need_weights)
            weights.append(w)
        return EncodedImages(self.norm(x), tuple(weights) if need_weights else ())


class ViT(nn.Module):
    """Image classification from the class token's final state (ViT eq. 4)."""

    def __init__(self, encoder: ViTEncoder, num_classes: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.pos_embed.shape[-1], num_classes)

    def forward(self, images: Tensor) -> Tensor:
        """(B, C, Hp, Wp) -> (B, num_classes) logits."""
        return self.head(self.encoder(images).tokens[:, 0])  # (B, D) -> (B, classes)

    def class_token_attention(self, images: Tensor) -> Tensor:
        """How much the class token attends to each patch, per layer, averaged over heads.

        Returns:
            (layers, B, G, G), each row summing (with the class token's share) to 1.
        """
        weights = self.encoder(images, need_weights=True).attention  # per layer (B, H, 1+N, 1+N)
        from_class = torch.stack([w[:, :, 0, 1:].mean(dim=1) for w in weights])  # (layers, B, N)
        grid = int(from_class.shape[-1] ** 0.5)
        return from_class.reshape(*from_class.shape[:2], grid, grid)  # (layers, B, G, G)
