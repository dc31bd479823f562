// M-7: the web console's static files, served by central. The files (HTML, scripts, styles and
// the vendored players copied at build time) are read once at start-up into memory, so a
// request never touches the file system and no path can reach outside the console. The pages
// hold no data: everything they show comes from the admin API with the token the operator
// enters on the login page (kept in the browser session).
//
// Routes: `/` and `/console` redirect to `/console/`; `/console/{file...}` serves a loaded file
// (`/console/` is index.html). Without a console directory they answer 404 saying so.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/http/router.h"

namespace meshwork::central {

struct ConsoleFiles {
  struct File {
    std::shared_ptr<const std::string> body;
    std::string content_type;
  };
  std::map<std::string, File> files;  // by path relative to the console directory
};

// Loads every regular file under `dir` (at most 512 files, 32 MiB in all; names with a
// leading dot are skipped). An empty `dir` loads nothing.
absl::StatusOr<std::shared_ptr<const ConsoleFiles>> LoadConsole(const std::string& dir);

void AddConsoleRoutes(http::Router& router, std::shared_ptr<const ConsoleFiles> console);

}  // namespace meshwork::central
