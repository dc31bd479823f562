# M-8: `cpack -G DEB` in a build directory makes two packages:
#   meshwork-central   /usr/bin/meshwork-central, /usr/bin/meshctl, the web console in
#                      /usr/share/meshwork/console, its systemd unit, /etc/meshwork/central.flags,
#                      the Grafana dashboard and Prometheus examples in /usr/share/meshwork/
#   meshwork-streamer  /usr/bin/meshwork-streamer, its unit, /etc/meshwork/streamer.flags
# Both create the `meshwork` system user; central's makes the admin API token on install.
set(MESHWORK_DEB_DIR ${CMAKE_SOURCE_DIR}/deploy/debian)

# Installed under the package's names, then stripped (CPACK_STRIP_FILES covers install(TARGETS)
# only; the build keeps its debug information).
function(meshwork_install_binary target name component)
  install(PROGRAMS $<TARGET_FILE:${target}> DESTINATION bin RENAME ${name} COMPONENT ${component})
  install(CODE "execute_process(COMMAND strip --strip-unneeded --remove-section=.comment
      --remove-section=.note \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/${name}\"
      COMMAND_ERROR_IS_FATAL ANY)" COMPONENT ${component})
endfunction()

meshwork_install_binary(central meshwork-central central)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/meshctl DESTINATION bin COMPONENT central)
install(DIRECTORY ${CMAKE_BINARY_DIR}/console/ DESTINATION share/meshwork/console
        COMPONENT central PATTERN ".built" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/meshwork-central.service
        DESTINATION lib/systemd/system COMPONENT central)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/flags/central.flags DESTINATION /etc/meshwork
        COMPONENT central)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/grafana/meshwork.json
        DESTINATION share/meshwork/grafana COMPONENT central)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/prometheus/meshwork-alerts.yml
        ${CMAKE_SOURCE_DIR}/deploy/prometheus/prometheus.yml
        DESTINATION share/meshwork/prometheus COMPONENT central)

meshwork_install_binary(streamer meshwork-streamer streamer)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/meshwork-streamer.service
        DESTINATION lib/systemd/system COMPONENT streamer)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/flags/streamer.flags DESTINATION /etc/meshwork
        COMPONENT streamer)

# Debian's documentation files for each package: copyright and a compressed changelog.
set(MESHWORK_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/debian/changelog.Debian.gz)
add_custom_command(OUTPUT ${MESHWORK_CHANGELOG_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian
  COMMAND gzip -9nc ${MESHWORK_DEB_DIR}/changelog > ${MESHWORK_CHANGELOG_GZ}
  DEPENDS ${MESHWORK_DEB_DIR}/changelog)
# Manual pages, compressed the way Debian wants them (gzip -9n: no name or time stamp).
set(MESHWORK_MAN_GZ "")
foreach(page meshwork-central.8 meshwork-streamer.8 meshctl.1)
  set(gz ${CMAKE_BINARY_DIR}/debian/man/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian/man
    COMMAND gzip -9nc ${CMAKE_SOURCE_DIR}/deploy/man/${page} > ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/deploy/man/${page})
  list(APPEND MESHWORK_MAN_GZ ${gz})
endforeach()
add_custom_target(debian_changelog ALL DEPENDS ${MESHWORK_CHANGELOG_GZ} ${MESHWORK_MAN_GZ})
install(FILES ${CMAKE_BINARY_DIR}/debian/man/meshwork-central.8.gz
  DESTINATION share/man/man8 COMPONENT central)
install(FILES ${CMAKE_BINARY_DIR}/debian/man/meshctl.1.gz DESTINATION share/man/man1
  COMPONENT central)
install(FILES ${CMAKE_BINARY_DIR}/debian/man/meshwork-streamer.8.gz
  DESTINATION share/man/man8 COMPONENT streamer)
foreach(component central streamer)
  install(FILES ${MESHWORK_DEB_DIR}/copyright ${MESHWORK_CHANGELOG_GZ}
          DESTINATION share/doc/meshwork-${component} COMPONENT ${component})
  install(FILES ${MESHWORK_DEB_DIR}/${component}/lintian-overrides
          DESTINATION share/lintian/overrides RENAME meshwork-${component}
          COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_NAME meshwork)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)  # 0.1.0-1: a Debian revision, as the changelog says
set(CPACK_PACKAGE_CONTACT "Meshwork maintainers <maintainers@meshwork.invalid>")
set(CPACK_PACKAGE_VENDOR "Meshwork")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL central streamer)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_CENTRAL_PACKAGE_NAME meshwork-central)
set(CPACK_DEBIAN_STREAMER_PACKAGE_NAME meshwork-streamer)
set(CPACK_DEBIAN_CENTRAL_PACKAGE_DEPENDS "adduser, python3")
set(CPACK_DEBIAN_STREAMER_PACKAGE_DEPENDS "adduser")
set(CPACK_COMPONENT_CENTRAL_DESCRIPTION
    "Meshwork live-streaming cluster: central control plane\nThe control plane of a Meshwork cluster: configuration store, viewer routing,\nthe streamers' control channel, the admin API, the web console and meshctl.")
set(CPACK_COMPONENT_STREAMER_DESCRIPTION
    "Meshwork live-streaming cluster: streamer node\nA stateless Meshwork node: ingest, packaging, origin, edge relay and DVR,\nserving HLS, LL-HLS and DASH over HTTP/1.1 and HTTP/2.")
foreach(component central streamer)
  string(TOUPPER ${component} upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_EXTRA
      ${MESHWORK_DEB_DIR}/${component}/postinst ${MESHWORK_DEB_DIR}/${component}/prerm
      ${MESHWORK_DEB_DIR}/${component}/postrm ${MESHWORK_DEB_DIR}/${component}/conffiles)
endforeach()
include(CPack)
