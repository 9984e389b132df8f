# Wrappers around add_mlir_* that keep Thunder's targets out of MLIR's export set
# and in our own (ThunderTargets, namespace Thunder::).
#
# Every compiler library links the shared libMLIR (and through it libLLVM): on a
# 2-core machine that keeps link times short and the binaries small.

set_property(GLOBAL PROPERTY THUNDER_EXPORTED_TARGETS "")

# thunder_add_library(<name> <sources>... [DEPENDS ...] [LINK_LIBS ...])
#   A compiler library that uses MLIR. <name> is the CMake target (e.g.
#   ThunderDialect); Thunder::<name without the Thunder prefix> is its alias.
function(thunder_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_mlir_library(${name}
    ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR
    DISABLE_INSTALL
    DEPENDS ${ARG_DEPENDS}
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS} MLIR)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_include_directories(${name} SYSTEM PUBLIC
    ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  _thunder_export(${name})
endfunction()

# thunder_add_plain_library(<name> <sources>... [LINK_LIBS ...])
#   A library with no MLIR/LLVM dependency (support code the runtime can share).
function(thunder_add_plain_library name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  add_library(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  _thunder_export(${name})
endfunction()

# thunder_add_shared_library(<name> <sources>... EXPORT_NAME <export> [LINK_LIBS ...])
#   A shared library with no MLIR/LLVM dependency, for applications (the runtime):
#   Thunder::<export> in the build tree and in ThunderTargets. Only symbols marked
#   visibility("default") are exported; LLVM's -fno-exceptions does not apply
#   (plain add_library). LINK_LIBS are private.
function(thunder_add_shared_library name)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "LINK_LIBS" ${ARGN})
  add_library(${name} SHARED ${ARG_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  set_target_properties(${name} PROPERTIES
    EXPORT_NAME ${ARG_EXPORT_NAME}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  endif()
  add_library(Thunder::${ARG_EXPORT_NAME} ALIAS ${name})
  install(TARGETS ${name} EXPORT ThunderTargets
    LIBRARY DESTINATION lib ARCHIVE DESTINATION lib RUNTIME DESTINATION bin)
  set_property(GLOBAL APPEND PROPERTY THUNDER_EXPORTED_TARGETS ${name})
endfunction()

# thunder_add_tool(<name> <sources>... [LINK_LIBS ...])
function(thunder_add_tool name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  add_llvm_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${THUNDER_TOOLS_DIR})
  install(TARGETS ${name} EXPORT ThunderTargets RUNTIME DESTINATION bin)
endfunction()

function(_thunder_export name)
  string(REGEX REPLACE "^Thunder" "" short ${name})
  add_library(Thunder::${short} ALIAS ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${short})
  install(TARGETS ${name} EXPORT ThunderTargets
    LIBRARY DESTINATION lib ARCHIVE DESTINATION lib RUNTIME DESTINATION bin)
  set_property(GLOBAL APPEND PROPERTY THUNDER_EXPORTED_TARGETS ${name})
endfunction()
