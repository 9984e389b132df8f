"""Prints a function whose weights are too large to write by hand, for
fold_weights.mlir: w (128x256 f32, all ones) times scale[:, None] with
scale = [1, 2, ..., 128], where the broadcast of scale is 128 KiB (too large
to fold on its own) and the product is no larger than w."""
import struct

ROWS, COLS = 128, 256


def blob(values):
    # A dense_resource blob: the alignment (4, little-endian), then the bytes.
    return "0x04000000" + struct.pack(f"<{len(values)}f", *values).hex().upper()


print(f"""func.func @large_broadcast(%x: tensor<{ROWS}x{COLS}xf32>) -> tensor<{ROWS}x{COLS}xf32> {{
  %s = thunder.constant dense_resource<scale> : tensor<{ROWS}xf32>
  %b = thunder.broadcast %s, dims = [0] : tensor<{ROWS}xf32> -> tensor<{ROWS}x{COLS}xf32>
  %w = thunder.constant dense_resource<w> : tensor<{ROWS}x{COLS}xf32>
  %ws = thunder.mul %w, %b : tensor<{ROWS}x{COLS}xf32>
  %a = thunder.add %x, %b : tensor<{ROWS}x{COLS}xf32>
  %y = thunder.mul %a, %ws : tensor<{ROWS}x{COLS}xf32>
  return %y : tensor<{ROWS}x{COLS}xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      scale: "{blob([float(i + 1) for i in range(ROWS)])}",
      w: "{blob([1.0] * (ROWS * COLS))}"
    }}
  }}
#-}}""")
