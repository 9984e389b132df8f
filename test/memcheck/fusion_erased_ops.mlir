module {
  func.func @main(%arg0: tensor<16x33xbf16> {thunder.name = "inputs_0"}, %arg1: tensor<1x33xbf16> {thunder.name = "inputs_1"}, %arg2: tensor<16x33xbf16> {thunder.name = "inputs_2"}, %arg3: tensor<1x9xbf16> {thunder.name = "inputs_3"}, %arg4: tensor<9x1xbf16> {thunder.name = "inputs_4"}) -> (tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16xbf16>, tensor<16x1xbf16>, tensor<16xi64>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x66xbf16>, tensor<16x33xbf16>, tensor<16x4xbf16>, tensor<16x33xbf16>, tensor<1x1xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x1xbf16>, tensor<16x33xbf16>, tensor<bf16>, tensor<16xbf16>) attributes {thunder.symbol_ranges = {s29 = array<i64: 2, -1>}} {
    %0 = thunder.broadcast %arg1, dims = [0, 1] : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %1 = thunder.add %arg0, %0 : tensor<16x33xbf16>
    %2 = thunder.broadcast %arg1, dims = [0, 1] : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %3 = thunder.mul %arg0, %2 : tensor<16x33xbf16>
    %4 = thunder.constant dense<3.000000e+00> : tensor<16x33xbf16>
    %5 = thunder.sub %arg0, %4 : tensor<16x33xbf16>
    %6 = thunder.broadcast %arg1, dims = [0, 1] : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %7 = thunder.compare gt, %arg0, %6 : tensor<16x33xbf16>
    %8 = thunder.broadcast %arg1, dims = [0, 1] : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %9 = thunder.where %7, %arg0, %8 : tensor<16x33xbf16>
    %10 = thunder.broadcast %arg1, dims = [0, 1] : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %11 = thunder.maximum %arg0, %10 : tensor<16x33xbf16>
    %12 = thunder.abs %arg0 : tensor<16x33xbf16>
    %13 = thunder.neg %12 : tensor<16x33xbf16>
    %14 = thunder.constant dense<-1.000000e+00> : tensor<16x33xbf16>
    %15 = thunder.maximum %arg0, %14 : tensor<16x33xbf16>
    %16 = thunder.constant dense<2.000000e+00> : tensor<16x33xbf16>
    %17 = thunder.minimum %15, %16 : tensor<16x33xbf16>
    %18 = thunder.sum %arg0 dims = [1] : tensor<16x33xbf16> -> tensor<16xbf16>
    %19 = thunder.max %arg0 dims = [1] keepdim : tensor<16x33xbf16> -> tensor<16x1xbf16>
    %20 = thunder.argmax %arg0 dim = 1 : tensor<16x33xbf16> -> tensor<16xi64>
    %21 = thunder.cumsum %arg0 dim = 1 : tensor<16x33xbf16>
    %22 = thunder.transpose %arg0, permutation = [0, 1] : tensor<16x33xbf16> -> tensor<16x33xbf16>
    %23 = thunder.constant dense<2.000000e+00> : tensor<16x33xbf16>
    %24 = thunder.mul %22, %23 : tensor<16x33xbf16>
    %25 = thunder.concat %arg0, %arg2 dim = 1 : (tensor<16x33xbf16>, tensor<16x33xbf16>) -> tensor<16x66xbf16>
    %26 = thunder.constant dense<[32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]> : tensor<33xi64>
    %27 = thunder.index_select %arg0, %26 dim = 1 : (tensor<16x33xbf16>, tensor<33xi64>) -> tensor<16x33xbf16>
    %28 = thunder.slice %arg0, start = [0, 24], end = [16, 28], step = [1, 1] : tensor<16x33xbf16> -> tensor<16x4xbf16>
    %29 = thunder.constant dense<1.000000e+00> : tensor<16x4xbf16>
    %30 = thunder.add %28, %29 : tensor<16x4xbf16>
    %31 = thunder.expand %arg1 : tensor<1x33xbf16> -> tensor<16x33xbf16>
    %32 = thunder.add %31, %arg2 : tensor<16x33xbf16>
    %33 = thunder.matmul %arg3, %arg4 : (tensor<1x9xbf16>, tensor<9x1xbf16>) -> tensor<1x1xbf16>
    %34 = thunder.div %arg0, %arg2 : tensor<16x33xbf16>
    %35 = thunder.constant dense<4.000000e+00> : tensor<16x33xbf16>
    %36 = thunder.minimum %arg0, %35 : tensor<16x33xbf16>
    %37 = thunder.exp %36 : tensor<16x33xbf16>
    %38 = thunder.tanh %arg0 : tensor<16x33xbf16>
    %39 = thunder.sqrt %arg2 : tensor<16x33xbf16>
    %40 = thunder.mean %arg0 dims = [1] keepdim : tensor<16x33xbf16> -> tensor<16x1xbf16>
    %41 = thunder.softmax %arg0 dim = 1 : tensor<16x33xbf16>
    %42 = thunder.sum %arg0 dims = [0, 1] : tensor<16x33xbf16> -> tensor<bf16>
    %43 = thunder.mean %arg0 dims = [1] keepdim : tensor<16x33xbf16> -> tensor<16x1xbf16>
    %44 = thunder.broadcast %43, dims = [0, 1] : tensor<16x1xbf16> -> tensor<16x33xbf16>
    %45 = thunder.sub %arg0, %44 : tensor<16x33xbf16>
    %46 = thunder.mul %45, %45 : tensor<16x33xbf16>
    %47 = thunder.sum %46 dims = [1] : tensor<16x33xbf16> -> tensor<16xbf16>
    %48 = thunder.constant dense<3.200000e+01> : tensor<16xbf16>
    %49 = thunder.div %47, %48 : tensor<16xbf16>
    return %1, %3, %5, %9, %11, %13, %17, %18, %19, %20, %21, %24, %25, %27, %30, %32, %33, %34, %37, %38, %39, %40, %41, %42, %49 : tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16xbf16>, tensor<16x1xbf16>, tensor<16xi64>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x66xbf16>, tensor<16x33xbf16>, tensor<16x4xbf16>, tensor<16x33xbf16>, tensor<1x1xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x33xbf16>, tensor<16x1xbf16>, tensor<16x33xbf16>, tensor<bf16>, tensor<16xbf16>
  }
}
