#pragma once
// The built-in page's files, embedded at build time (src/viewer/embed.cmake): the page itself
// (page/index.html, page/app.js), Foxglove's schemas it decodes with, and its npm packages
// (three, uplot, protobufjs from page/package-lock.json).
#include <cstddef>
#include <vector>

namespace kestrel::viewer::detail {

struct PageFile {
  const char* path;  // URL path, "/index.html"
  const char* type;  // Content-Type
  const unsigned char* data;
  std::size_t size;
};

// Empty when the build had no page packages (src/viewer/page/node_modules missing).
const std::vector<PageFile>& page_files();

}  // namespace kestrel::viewer::detail
