# Installs the CMake package: find_package(qgml) gives qgml::qgml (and qgml::lapacke when built),
# re-finding Kokkos and KokkosKernels where this build found them unless the user points elsewhere.
include(CMakePackageConfigHelpers)
set(QGML_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/qgml)
install(EXPORT qgmlTargets NAMESPACE qgml:: DESTINATION ${QGML_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/qgmlConfig.cmake.in ${PROJECT_BINARY_DIR}/qgmlConfig.cmake
  INSTALL_DESTINATION ${QGML_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qgmlConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qgmlConfig.cmake ${PROJECT_BINARY_DIR}/qgmlConfigVersion.cmake
  DESTINATION ${QGML_INSTALL_CMAKEDIR})
