# lit configuration for Thunder's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Thunder"
# The internal shell: the same behaviour on every host and lit version.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.thunder_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit", "python"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["thunder-opt"], [config.thunder_tools_dir])
llvm_config.add_tool_substitutions(["FileCheck", "not", "split-file"],
                                   [config.llvm_tools_dir])
