// A GPT-2-style transformer block (batch 1, 128 tokens, 768 wide, 12 heads)
// written in the thunder dialect, as the PyTorch importer will produce it.
// Weights are thunder.weight ops naming entries of an external table.
func.func @gpt2_block(%x: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  %ln1_w = thunder.weight "h.0.ln_1.weight" : tensor<768xf32>
  %ln1_b = thunder.weight "h.0.ln_1.bias" : tensor<768xf32>
  %qkv_w = thunder.weight "h.0.attn.c_attn.weight" : tensor<2304x768xf32>
  %qkv_b = thunder.weight "h.0.attn.c_attn.bias" : tensor<2304xf32>
  %proj_w = thunder.weight "h.0.attn.c_proj.weight" : tensor<768x768xf32>
  %ln2_w = thunder.weight "h.0.ln_2.weight" : tensor<768xf32>
  %ln2_b = thunder.weight "h.0.ln_2.bias" : tensor<768xf32>
  %fc_w = thunder.weight "h.0.mlp.c_fc.weight" : tensor<3072x768xf32>
  %out_w = thunder.weight "h.0.mlp.c_proj.weight" : tensor<768x3072xf32>

  // Attention.
  %h = thunder.layer_norm %x weight %ln1_w bias %ln1_b normalized_rank = 1 epsilon = 1.0e-05
      : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %qkv0 = thunder.matmul %h, %qkv_w transpose_rhs : (tensor<1x128x768xf32>, tensor<2304x768xf32>) -> tensor<1x128x2304xf32>
  %bias = thunder.broadcast %qkv_b, dims = [2] : tensor<2304xf32> -> tensor<1x128x2304xf32>
  %qkv = thunder.add %qkv0, %bias : tensor<1x128x2304xf32>
  %q0 = thunder.slice %qkv, start = [0, 0, 0], end = [1, 128, 768], step = [1, 1, 1] : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>
  %k0 = thunder.slice %qkv, start = [0, 0, 768], end = [1, 128, 1536], step = [1, 1, 1] : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>
  %v0 = thunder.slice %qkv, start = [0, 0, 1536], end = [1, 128, 2304], step = [1, 1, 1] : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>
  %q1 = thunder.reshape %q0 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %k1 = thunder.reshape %k0 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %v1 = thunder.reshape %v0 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %q = thunder.transpose %q1, permutation = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %k = thunder.transpose %k1, permutation = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %v = thunder.transpose %v1, permutation = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %att = thunder.sdpa %q, %k, %v causal
      : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
  %att1 = thunder.transpose %att, permutation = [0, 2, 1, 3] : tensor<1x12x128x64xf32> -> tensor<1x128x12x64xf32>
  %att2 = thunder.reshape %att1 : tensor<1x128x12x64xf32> -> tensor<1x128x768xf32>
  %proj_t = thunder.transpose %proj_w, permutation = [1, 0] : tensor<768x768xf32> -> tensor<768x768xf32>
  %proj = thunder.matmul %att2, %proj_t : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
  %res1 = thunder.add %x, %proj : tensor<1x128x768xf32>

  // MLP.
  %h2 = thunder.layer_norm %res1 weight %ln2_w bias %ln2_b normalized_rank = 1 epsilon = 1.0e-05
      : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %fc = thunder.matmul %h2, %fc_w transpose_rhs : (tensor<1x128x768xf32>, tensor<3072x768xf32>) -> tensor<1x128x3072xf32>
  %act = thunder.gelu %fc approximate = tanh : tensor<1x128x3072xf32>
  %out = thunder.matmul %act, %out_w transpose_rhs : (tensor<1x128x3072xf32>, tensor<768x3072xf32>) -> tensor<1x128x768xf32>
  %res2 = thunder.add %res1, %out : tensor<1x128x768xf32>
  return %res2 : tensor<1x128x768xf32>
}
