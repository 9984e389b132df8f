# Install rules and ThunderConfig.cmake for find_package(Thunder CONFIG), in the
# build tree and the install tree.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/thunder ${PROJECT_SOURCE_DIR}/include/thunder-c
  DESTINATION include FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/thunder
  DESTINATION include FILES_MATCHING PATTERN "*.inc" PATTERN "CMakeFiles" EXCLUDE)

set(THUNDER_INSTALL_CMAKEDIR lib/cmake/Thunder)
install(EXPORT ThunderTargets NAMESPACE Thunder::
  DESTINATION ${THUNDER_INSTALL_CMAKEDIR})
export(EXPORT ThunderTargets NAMESPACE Thunder::
  FILE ${PROJECT_BINARY_DIR}/lib/cmake/Thunder/ThunderTargets.cmake)

configure_package_config_file(cmake/ThunderConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/Thunder/ThunderConfig.cmake
  INSTALL_DESTINATION ${THUNDER_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/Thunder/ThunderConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/lib/cmake/Thunder/ThunderConfig.cmake
  ${PROJECT_BINARY_DIR}/lib/cmake/Thunder/ThunderConfigVersion.cmake
  DESTINATION ${THUNDER_INSTALL_CMAKEDIR})
