# lwIP 2.1.3 for the kernel, from the Debian source package in .deps/lwip (toolchain/bootstrap.sh).
# The source lists come from lwIP's own src/Filelists.cmake. That file is read, not included:
# including it would configure files (init.h, a Doxyfile) inside the shared dependency tree.
# Built: the core, IPv4 (ARP, ICMP, DHCP, UDP, TCP) and the Ethernet layer; no IPv6, no
# sequential or socket API (raw API with NO_SYS=1, see kernel/net/port/lwipopts.h).
set(LWIP_DIR ${PROJECT_SOURCE_DIR}/.deps/lwip CACHE PATH "lwIP 2.1.3 source tree")
if(NOT EXISTS ${LWIP_DIR}/src/Filelists.cmake)
  message(FATAL_ERROR "lwIP source missing at ${LWIP_DIR} (run ./basalt deps)")
endif()

file(READ ${LWIP_DIR}/src/Filelists.cmake _lwip_filelists)
function(lwip_source_list out name)
  string(REGEX MATCH "set\\(${name}\n([^)]*)\\)" _block "${_lwip_filelists}")
  if(NOT _block)
    message(FATAL_ERROR "lwIP Filelists.cmake has no ${name}")
  endif()
  string(REGEX MATCHALL "\\\${LWIP_DIR}/[^ \t\n]+" _files "${CMAKE_MATCH_1}")
  string(REPLACE "\${LWIP_DIR}" "${LWIP_DIR}" _files "${_files}")
  set(${out} ${_files} PARENT_SCOPE)
endfunction()
lwip_source_list(_lwip_core lwipcore_SRCS)
lwip_source_list(_lwip_core4 lwipcore4_SRCS)

add_library(basalt_lwip STATIC ${_lwip_core} ${_lwip_core4} ${LWIP_DIR}/src/netif/ethernet.c
            ${LWIP_DIR}/src/apps/sntp/sntp.c)
target_include_directories(basalt_lwip SYSTEM PUBLIC ${PROJECT_SOURCE_DIR}/kernel/net/port ${LWIP_DIR}/src/include)
target_compile_options(basalt_lwip PRIVATE -Wall -Wextra -std=gnu11)
