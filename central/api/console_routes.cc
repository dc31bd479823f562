#include "central/api/console_routes.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"

namespace meshwork::central {
namespace {

constexpr size_t kMaxFiles = 512;
constexpr uint64_t kMaxBytes = uint64_t{32} << 20;

std::string ContentTypeOf(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  return "application/octet-stream";
}

http::Response Redirect(std::string_view to) {
  http::Response res{http::Status::found, 11};
  res.set(http::beast_http::field::location, to);
  res.set(http::beast_http::field::cache_control, "no-cache");
  return res;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ConsoleFiles>> LoadConsole(const std::string& dir) {
  auto console = std::make_shared<ConsoleFiles>();
  if (dir.empty()) return console;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--console_dir ", dir, " is not a directory"));
  }
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.filename().string().starts_with(".")) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    if (console->files.size() >= kMaxFiles) {
      return absl::ResourceExhaustedError(
          absl::StrCat("--console_dir ", dir, " holds more than ", kMaxFiles, " files"));
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) {
      return absl::UnavailableError(absl::StrCat("cannot read ", path.string()));
    }
    total += text.str().size();
    if (total > kMaxBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("--console_dir ", dir, " holds more than ", kMaxBytes, " bytes"));
    }
    std::string relative = fs::relative(path, dir).generic_string();
    console->files[relative] = {std::make_shared<const std::string>(text.str()),
                                ContentTypeOf(path)};
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  return console;
}

void AddConsoleRoutes(http::Router& router, std::shared_ptr<const ConsoleFiles> console) {
  router.Add({http::Verb::get}, "/",
             [](http::RequestContext&, http::Responder r) { r.Send(Redirect("/console/")); });
  router.Add({http::Verb::get}, "/console",
             [](http::RequestContext&, http::Responder r) { r.Send(Redirect("/console/")); });
  auto serve = [console](std::string_view name, http::RequestContext& ctx, http::Responder r) {
    if (console->files.empty()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError("no console is installed on this central (--console_dir)")));
    }
    auto it = console->files.find(std::string(name.empty() ? "index.html" : name));
    if (it == console->files.end()) {
      return r.Send(http::ErrorResponse(
          absl::NotFoundError(absl::StrCat("no console file ", std::string(name)))));
    }
    http::Response header{http::Status::ok, 11};
    // Pages are looked at again each time (a new version shows at once); the rest is cached
    // for an hour.
    header.set(http::beast_http::field::cache_control,
               it->second.content_type.starts_with("text/html") ? "no-cache" : "max-age=3600");
    header.set("X-Content-Type-Options", "nosniff");
    header.set("Content-Security-Policy",
               "default-src 'self'; connect-src *; media-src * blob:; img-src 'self' data:; "
               "style-src 'self' 'unsafe-inline'; worker-src 'self' blob:; frame-ancestors 'none'");
    http::SharedBuffers body;
    body.Append(it->second.body);
    http::SendMedia(ctx.request, r, std::move(body), it->second.content_type, std::move(header));
  };
  router.Add({http::Verb::get}, "/console/", [serve](http::RequestContext& ctx, http::Responder r) {
    serve("", ctx, std::move(r));
  });
  router.Add({http::Verb::get}, "/console/{file...}",
             [serve](http::RequestContext& ctx, http::Responder r) {
               serve(ctx.params[0], ctx, std::move(r));
             });
}

}  // namespace meshwork::central
