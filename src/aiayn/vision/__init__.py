"""The Transformer beyond text: ViT, DETR and SETR built from aiayn's own encoder/decoder layers.

Shape notation, beside the text model's (B batch, S source length, D d_model, H heads, Dh head
size): C channels or classes, Hp/Wp image height/width in pixels, G tokens per side of the
patch (or feature) grid, N = G*G image tokens, Q object queries, L decoder layers, M objects.
"""
