"""Our models in other engines' formats: CTranslate2 and ONNX (`aiayn export`)."""
