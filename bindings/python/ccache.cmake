# Included before project() in the wheel build (pyproject.toml): ccache as the compiler launcher when
# it is on PATH and no launcher was chosen, so that repeated `pip install .` builds are fast.
if(NOT CMAKE_CXX_COMPILER_LAUNCHER AND NOT DEFINED ENV{CMAKE_CXX_COMPILER_LAUNCHER})
  find_program(QGML_CCACHE ccache)
  if(QGML_CCACHE)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${QGML_CCACHE}" CACHE STRING "C++ compiler launcher")
    set(CMAKE_C_COMPILER_LAUNCHER "${QGML_CCACHE}" CACHE STRING "C compiler launcher")
  endif()
endif()
