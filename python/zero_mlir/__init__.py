"""zero-mlir's Python front door.

zero_mlir.torch exports a PyTorch model and its AdamW optimizer to a
training step that zero-run and zero-compile train (it needs torch and
torch-mlir: pip install 'zero-mlir[torch]', or scripts/setup.sh --torch).
"""
