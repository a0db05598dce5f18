"""DETR (Carion et al., 2020): a CNN's feature map as the encoder's sequence, Q learned object
queries into the decoder, and a fixed-size set of (class, box) predictions."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from aiayn.model.layers import DecoderLayer, EncoderLayer, LayerSpec, layers_of
from aiayn.vision.backbone import ResNetBackbone
from aiayn.vision.positional import sine_positions_2d


@dataclass(frozen=True)
class Detections:
    """Every decoder layer's predictions; the last layer's are the answer, the others feed the
    auxiliary losses."""

    logits: Tensor  # (L, B, Q, classes + 1), the last class is "no object"
    boxes: Tensor  # (L, B, Q, 4) as (cx, cy, w, h), relative to the image size, in [0, 1]


class BoxHead(nn.Module):
    """DETR's 3-layer perceptron with ReLU for the box, squashed into the image."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_model, d_model),
            nn.ReLU(),
            nn.Linear(d_model, d_model),
            nn.ReLU(),
            nn.Linear(d_model, 4),
        )

    def forward(self, x: Tensor) -> Tensor:
        """(..., D) -> (..., 4) boxes (cx, cy, w, h) in [0, 1]."""
        return self.layers(x).sigmoid()


class DETR(nn.Module):
    """Backbone -> 1x1 projection to D -> encoder (2-D sine positions on queries and keys of
    every layer) -> decoder over Q object queries -> class and box heads at every layer."""

    pos: Tensor  # (1, N, D) the feature map's 2-D sine positions, a buffer (not saved)

    def __init__(
        self,
        spec: LayerSpec,
        n_encoder_layers: int,
        n_decoder_layers: int,
        image_size: int,
        in_channels: int,
        num_classes: int,
        n_queries: int,
        backbone_channels: int,
        backbone_stride: int,
    ) -> None:
        super().__init__()
        D = spec.d_model
        grid = image_size // backbone_stride
        self.backbone = ResNetBackbone(in_channels, backbone_channels, backbone_stride)
        self.input_proj = nn.Conv2d(self.backbone.out_channels, D, kernel_size=1)
        self.register_buffer("pos", sine_positions_2d(grid, grid, D)[None], persistent=False)
        self.query_pos = nn.Parameter(torch.randn(1, n_queries, D))  # the object queries
        self.encoder_layers = nn.ModuleList(EncoderLayer(spec) for _ in range(n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(spec) for _ in range(n_decoder_layers))
        norm = nn.LayerNorm
        self.encoder_norm = norm(D, eps=spec.norm_eps) if spec.norm_first else nn.Identity()
        self.decoder_norm = norm(D, eps=spec.norm_eps)  # on every layer's output (shared)
        self.class_head = nn.Linear(D, num_classes + 1)
        self.box_head = BoxHead(D)
        for layer in [*self.encoder_layers, *self.decoder_layers]:
            for p in layer.parameters():
                if p.dim() > 1:  # DETR's initialization of the transformer
                    nn.init.xavier_uniform_(p)

    def transformer(self, src: Tensor, pos: Tensor, query_pos: Tensor) -> Tensor:
        """The encoder-decoder part alone.

        Args:
            src: (B, S, D) the flattened, projected feature map.
            pos: (B or 1, S, D) its positions, added to queries and keys in every layer.
            query_pos: (B or 1, Q, D) the object queries.

        Returns:
            (L, B, Q, D) every decoder layer's output, after the shared final LayerNorm.
        """
        memory = src
        for layer in self.encoder_layers:
            memory, _ = layer(memory, None, pos=pos)  # (B, S, D)
        memory = self.encoder_norm(memory)
        B, Q = src.shape[0], query_pos.shape[1]
        x = src.new_zeros(B, Q, src.shape[-1])  # (B, Q, D): the queries' content starts empty
        outputs = []
        for layer in layers_of(self.decoder_layers, DecoderLayer):
            cross_k, cross_v = layer.cross_attn.project_kv(memory)  # 2 x (B, H, S, Dh)
            cross_k = cross_k + layer.cross_attn.project_position(pos, "k")
            x = layer(x, cross_k, cross_v, None, is_causal=False, query_pos=query_pos).x
            outputs.append(self.decoder_norm(x))
        return torch.stack(outputs)  # (L, B, Q, D)

    def forward(self, images: Tensor) -> Detections:
        """(B, C, Hp, Wp) images -> every decoder layer's class logits and boxes."""
        features = self.input_proj(self.backbone(images))  # (B, D, G, G)
        src = features.flatten(2).transpose(1, 2)  # (B, N, D)
        hidden = self.transformer(src, self.pos, self.query_pos)  # (L, B, Q, D)
        return Detections(self.class_head(hidden), self.box_head(hidden))
