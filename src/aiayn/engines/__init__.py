"""Running exported models: CTranslate2 and ONNX Runtime behind our text pipeline."""
